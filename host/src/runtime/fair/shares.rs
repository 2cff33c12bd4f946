//! The decisions of the fair share, without threads or clocks: who gets a free turn, who should
//! give theirs back, and what each instance has been charged. `mod.rs` drives it from the
//! executions' futures; the tests here drive it from a simulated clock.
//!
//! The node has `slots` turns (one per guest thread). An instance is an account with a weight
//! (its `cpu_weight`, 100 unless the operator set another) and a virtual time: the CPU its
//! executions used, in nanoseconds, times 100 divided by its weight. A free turn goes to the
//! waiting execution of the account with the least virtual time (its oldest waiting execution:
//! within an instance, first come first served), so over any window in which several instances
//! have work, each gets CPU in proportion to its weight, whatever the number of calls it keeps in
//! flight. A turn is never left unused while someone waits (work-conserving): an instance alone
//! gets every turn.
//!
//! An instance that had nothing to run keeps no account (10,000 sleeping instances cost nothing
//! here). When it comes back its virtual time starts at the `floor`: the least virtual time of the
//! accounts still at work (or of the last one given a turn, if none is): it cannot claim the CPU it
//! did not use while it was away (it would then shut everyone else out for as long), and it is
//! not behind those that kept working. Making an account looks at the others (a scan of the
//! instances with executions under way, not of all the node's).

use std::collections::{BTreeSet, HashMap, VecDeque};

/// The weight of an instance whose definition sets none; weights go from 1 to 10,000 (as the
/// Linux scheduler's `cpu.weight`).
pub const DEFAULT_WEIGHT: u32 = 100;
pub const MAX_WEIGHT: u32 = 10_000;

/// An account's place in the `Shares` (valid while one of its executions is registered).
pub type AccountId = usize;

/// Whether a turn was given at once or the execution waits in line.
#[derive(Debug, PartialEq, Eq)]
pub enum Acquired {
    Now,
    Queued,
}

#[derive(Debug)]
struct Account<W> {
    name: Box<str>,
    weight: u32,
    vtime: u64,
    /// Executions registered (running, waiting, or between the two: blocked on I/O).
    executions: usize,
    running: usize,
    waiting: VecDeque<W>,
    /// Its key in `ready` while it has waiting executions.
    ready_key: Option<(u64, u64)>,
}

/// The fair share's books (see the module's text). `W` is what a waiting execution is known by.
#[derive(Debug)]
pub struct Shares<W> {
    slots: usize,
    running: usize,
    accounts: Vec<Option<Account<W>>>,
    free: Vec<AccountId>,
    by_name: HashMap<Box<str>, AccountId>,
    /// The accounts with waiting executions, least virtual time first (then the oldest).
    ready: BTreeSet<(u64, u64, AccountId)>,
    floor: u64,
    seq: u64,
}

impl<W: PartialEq> Shares<W> {
    pub fn new(slots: usize) -> Shares<W> {
        Shares {
            slots: slots.max(1),
            running: 0,
            accounts: Vec::new(),
            free: Vec::new(),
            by_name: HashMap::new(),
            ready: BTreeSet::new(),
            floor: 0,
            seq: 0,
        }
    }

    /// Whether any execution waits for a turn.
    pub fn has_waiting(&self) -> bool {
        !self.ready.is_empty()
    }

    /// Registers an execution of instance `name`; its account is made (at the floor) if it had
    /// none, and takes the weight given (an instance's definition may have changed it).
    pub fn join(&mut self, name: &str, weight: u32) -> AccountId {
        let weight = weight.clamp(1, MAX_WEIGHT);
        if let Some(&id) = self.by_name.get(name) {
            let account = self.account_mut(id);
            account.executions += 1;
            account.weight = weight;
            return id;
        }
        // Not behind the least served of those still at work (nor the last given a turn).
        let least = self.accounts.iter().flatten().map(|a| a.vtime).min().unwrap_or(0);
        self.floor = self.floor.max(least);
        let account =
            Account { name: name.into(), weight, vtime: self.floor, executions: 1, running: 0, waiting: VecDeque::new(), ready_key: None };
        let id = match self.free.pop() {
            Some(id) => {
                self.accounts[id] = Some(account);
                id
            }
            None => {
                self.accounts.push(Some(account));
                self.accounts.len() - 1
            }
        };
        self.by_name.insert(name.into(), id);
        id
    }

    /// Unregisters an execution (it holds no turn and waits for none); an account left with no
    /// execution is forgotten.
    pub fn leave(&mut self, id: AccountId) {
        let account = self.account_mut(id);
        account.executions -= 1;
        if account.executions == 0 {
            debug_assert!(account.waiting.is_empty() && account.running == 0);
            let account = self.accounts[id].take().expect("a registered account");
            self.by_name.remove(&account.name);
            self.free.push(id);
        }
    }

    /// A turn for an execution of `id`: at once when one is free and no one waits, otherwise in
    /// line as `waiter`.
    pub fn acquire(&mut self, id: AccountId, waiter: W) -> Acquired {
        if self.running < self.slots && self.ready.is_empty() {
            self.running += 1;
            self.account_mut(id).running += 1;
            return Acquired::Now;
        }
        self.account_mut(id).waiting.push_back(waiter);
        self.rekey(id);
        Acquired::Queued
    }

    /// Whether the account has an execution on a turn now (a waiting execution of an account that
    /// has none is starved: `mod.rs` then asks the running guests to check at once).
    pub fn is_running(&self, id: AccountId) -> bool {
        self.account(id).running > 0
    }

    /// Takes `waiter` out of the line, if it is still there (`false`: it was given a turn).
    pub fn cancel(&mut self, id: AccountId, waiter: &W) -> bool {
        let account = self.account_mut(id);
        let Some(at) = account.waiting.iter().position(|w| w == waiter) else { return false };
        account.waiting.remove(at);
        self.rekey(id);
        true
    }

    /// Charges `id` for `used_ns` of CPU (while it keeps its turn).
    pub fn charge(&mut self, id: AccountId, used_ns: u64) {
        let account = self.account_mut(id);
        account.vtime = account.vtime.saturating_add(scaled(used_ns, account.weight));
        if account.ready_key.is_some() {
            self.rekey(id);
        }
    }

    /// Gives back a turn of `id` after it used `used_ns` of CPU on it; the turn goes to the
    /// waiting execution that is due (returned, with its account, to be woken).
    pub fn release(&mut self, id: AccountId, used_ns: u64) -> Option<(AccountId, W)> {
        self.charge(id, used_ns);
        self.running -= 1;
        self.account_mut(id).running -= 1;
        self.grant_next()
    }

    /// Whether an execution of `id` that has used `in_progress_ns` since its turn began should
    /// give it back now: another execution waits whose account has used no more than this one
    /// (its own instance's included, so that an instance's calls take turns).
    pub fn should_yield(&self, id: AccountId, in_progress_ns: u64) -> bool {
        let Some(&(least, _, _)) = self.ready.first() else { return false };
        let account = self.account(id);
        least <= account.vtime.saturating_add(scaled(in_progress_ns, account.weight))
    }

    /// How many instances have executions under way.
    pub fn accounts(&self) -> usize {
        self.by_name.len()
    }

    /// An account's virtual time (for the tests and the books).
    pub fn vtime(&self, id: AccountId) -> u64 {
        self.account(id).vtime
    }

    fn grant_next(&mut self) -> Option<(AccountId, W)> {
        if self.running >= self.slots {
            return None;
        }
        let &(vtime, _, id) = self.ready.first()?;
        let waiter = self.account_mut(id).waiting.pop_front().expect("a ready account has a waiting execution");
        self.running += 1;
        self.account_mut(id).running += 1;
        self.floor = self.floor.max(vtime);
        self.rekey(id);
        Some((id, waiter))
    }

    /// Puts the account in `ready` under its current virtual time, or takes it out when nothing
    /// of it waits.
    fn rekey(&mut self, id: AccountId) {
        if let Some((vtime, seq)) = self.account_mut(id).ready_key.take() {
            self.ready.remove(&(vtime, seq, id));
        }
        let account = self.accounts[id].as_mut().expect("a registered account");
        if !account.waiting.is_empty() {
            self.seq += 1;
            account.ready_key = Some((account.vtime, self.seq));
            self.ready.insert((account.vtime, self.seq, id));
        }
    }

    fn account(&self, id: AccountId) -> &Account<W> {
        self.accounts[id].as_ref().expect("a registered account")
    }

    fn account_mut(&mut self, id: AccountId) -> &mut Account<W> {
        self.accounts[id].as_mut().expect("a registered account")
    }
}

/// CPU nanoseconds in virtual time: as used at the default weight, less at a higher one.
fn scaled(ns: u64, weight: u32) -> u64 {
    (u128::from(ns) * u128::from(DEFAULT_WEIGHT) / u128::from(weight.max(1))).min(u128::from(u64::MAX)) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Simulates `slots` cores shared by instances of the given weights, each keeping `calls`
    /// CPU-bound executions in flight, for `quanta` quanta of 1 ms on every core; a running
    /// execution is asked at the end of each quantum whether it should give its turn back, as the
    /// epoch callback asks it. Returns the CPU each instance got.
    fn simulate(slots: usize, weights: &[u32], calls: usize, quanta: usize) -> Vec<u64> {
        const QUANTUM: u64 = 1_000_000;
        let mut shares: Shares<(usize, usize)> = Shares::new(slots);
        let ids: Vec<AccountId> =
            weights.iter().enumerate().map(|(i, &w)| (0..calls).map(|_| shares.join(&format!("i{i}"), w)).last().unwrap()).collect();
        let mut running: Vec<(usize, usize, u64)> = Vec::new();
        for call in 0..calls {
            for (instance, &id) in ids.iter().enumerate() {
                if shares.acquire(id, (instance, call)) == Acquired::Now {
                    running.push((instance, call, 0));
                }
            }
        }
        let mut got = vec![0u64; weights.len()];
        for _ in 0..quanta {
            let mut next = Vec::new();
            for (instance, call, used) in std::mem::take(&mut running) {
                got[instance] += QUANTUM;
                let used = used + QUANTUM;
                if shares.should_yield(ids[instance], used) {
                    if let Some(((granted, granted_call), _)) = shares.release(ids[instance], used).map(|(_, w)| (w, ())) {
                        next.push((granted, granted_call, 0));
                    }
                    assert_eq!(shares.acquire(ids[instance], (instance, call)), Acquired::Queued, "someone was due");
                } else {
                    next.push((instance, call, used));
                }
            }
            assert_eq!(next.len(), slots, "no turn is left unused while executions wait");
            running = next;
        }
        got
    }

    fn assert_proportional(weights: &[u32], got: &[u64]) {
        let total: u64 = got.iter().sum();
        let weight: u32 = weights.iter().sum();
        for (w, g) in weights.iter().zip(got) {
            let expected = total as f64 * f64::from(*w) / f64::from(weight);
            let off = (*g as f64 - expected).abs() / expected;
            assert!(off < 0.05, "weights {weights:?}: got {got:?}, {w} is {:.1}% off its share", off * 100.0);
        }
    }

    #[test]
    fn two_three_and_ten_instances_get_cpu_in_proportion_to_their_weights() {
        for weights in [vec![100, 100], vec![100, 300], vec![100, 200, 300], vec![50, 100, 150, 200, 250, 300, 350, 400, 450, 500]] {
            // Unequal numbers of calls in flight do not change the share: only the weight does.
            let got = simulate(2, &weights, 20, 20_000);
            assert_proportional(&weights, &got);
        }
    }

    #[test]
    fn calls_in_flight_do_not_buy_a_larger_share() {
        let mut shares: Shares<u32> = Shares::new(2);
        let busy = (0..20).map(|_| shares.join("busy", 100)).last().unwrap();
        let quiet = shares.join("quiet", 100);
        for n in 0..20 {
            shares.acquire(busy, n);
        }
        // Both turns are busy's; one call of quiet waits, and is due before busy's 18 others.
        assert_eq!(shares.acquire(quiet, 100), Acquired::Queued);
        assert!(!shares.is_running(quiet));
        assert!(shares.should_yield(busy, 1), "busy used more than quiet: it gives its turn back");
        assert_eq!(shares.release(busy, 1_000_000), Some((quiet, 100)), "quiet's call goes before busy's own");
    }

    #[test]
    fn an_instance_alone_gets_every_turn() {
        let got = simulate(2, &[100], 5, 1000);
        assert_eq!(got, vec![2 * 1000 * 1_000_000]);
        // Alone with a single call: it is never asked to give its turn back.
        let mut shares: Shares<u32> = Shares::new(2);
        let id = shares.join("alone", 100);
        assert_eq!(shares.acquire(id, 0), Acquired::Now);
        assert!(!shares.should_yield(id, u64::MAX / 2));
    }

    #[test]
    fn a_turn_given_back_goes_to_the_next_in_line_and_an_idle_account_is_forgotten() {
        let mut shares: Shares<u32> = Shares::new(1);
        let a = shares.join("a", 100);
        let b = shares.join("b", 100);
        assert_eq!(shares.acquire(a, 1), Acquired::Now);
        assert_eq!(shares.acquire(b, 2), Acquired::Queued);
        // a blocks on a host call: its turn goes to b at once, though a used little.
        assert_eq!(shares.release(a, 10), Some((b, 2)));
        // a comes back: b holds the only turn, so a waits; b gives it back when it blocks.
        assert_eq!(shares.acquire(a, 1), Acquired::Queued);
        assert_eq!(shares.release(b, 10), Some((a, 1)));
        assert_eq!(shares.release(a, 10), None);
        shares.leave(a);
        shares.leave(b);
        assert!(shares.by_name.is_empty() && shares.ready.is_empty(), "nothing kept of idle instances");
    }

    #[test]
    fn a_returning_instance_starts_at_the_floor_not_at_zero() {
        let mut shares: Shares<u32> = Shares::new(1);
        let busy = shares.join("busy", 100);
        let other = shares.join("other", 100);
        shares.acquire(busy, 1);
        shares.acquire(other, 2);
        shares.release(busy, 5_000_000_000);
        shares.release(other, 0);
        shares.leave(other);
        // "other" comes back after busy used 5 s: it is not owed those 5 s.
        let back = shares.join("other", 100);
        assert!(shares.vtime(back) > 0, "it starts at the floor");
        assert!(shares.vtime(back) <= shares.vtime(busy));
    }

    #[test]
    fn a_cancelled_waiter_leaves_the_line() {
        let mut shares: Shares<u32> = Shares::new(1);
        let a = shares.join("a", 100);
        shares.acquire(a, 1);
        assert_eq!(shares.acquire(a, 2), Acquired::Queued);
        assert!(shares.cancel(a, &2));
        assert!(!shares.has_waiting());
        assert_eq!(shares.release(a, 0), None);
        assert!(!shares.cancel(a, &2), "not in line any more");
    }
}
