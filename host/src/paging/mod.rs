//! Paging documents: a frozen selection of items created by the first paged call, read page by
//! page by later calls. The rules here are pure (lifetime, page arithmetic, links); the selection
//! itself is stored with the instance's data (`store::tenant::paging`), so any node can serve it
//! and a restart loses none.

pub mod keys;

/// A document lives 5 minutes after its last use...
pub const IDLE_LIFETIME_MS: i64 = 5 * 60 * 1000;
/// ...and never more than 30 minutes after its creation.
pub const MAX_LIFETIME_MS: i64 = 30 * 60 * 1000;
/// The largest and default page.
pub const MAX_PAGE_SIZE: u64 = 1000;
/// The most live paging documents of one instance. Each holds its selection's keys on disk, so
/// without a bound a client could fill the disk by asking for documents; creating one past it
/// ends the oldest (whose pages then answer 404, as an expired document's do).
pub const MAX_LIVE_DOCUMENTS: i64 = 200;

/// When a document used at `last_use` and created at `created` expires.
pub fn expires_at(created: i64, last_use: i64) -> i64 {
    (last_use + IDLE_LIFETIME_MS).min(created + MAX_LIFETIME_MS)
}

/// One page of a document: `start` is 1-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageRequest {
    pub start: u64,
    pub size: u64,
}

/// The starts of the pages a client can move to from `page` in a document of `total` items.
/// `next` and `last` follow the grid that `page` stands on, so following `next` ends at `last`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Neighbours {
    pub first: u64,
    pub prev: Option<u64>,
    pub next: Option<u64>,
    pub last: u64,
}

pub fn neighbours(page: PageRequest, total: u64) -> Neighbours {
    let PageRequest { start, size } = page;
    let last = if total < start { start } else { start + (total - start) / size * size };
    Neighbours {
        first: 1,
        prev: (start > 1).then(|| start.saturating_sub(size).max(1)),
        next: (start + size <= total).then_some(start + size),
        last,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lifetime_is_reset_by_use_up_to_thirty_minutes() {
        let minute = 60_000;
        assert_eq!(expires_at(0, 0), 5 * minute);
        assert_eq!(expires_at(0, 4 * minute), 9 * minute);
        assert_eq!(expires_at(0, 27 * minute), 30 * minute);
        assert_eq!(expires_at(0, 29 * minute), 30 * minute);
    }

    #[test]
    fn links_follow_the_grid() {
        let p = |start, size| PageRequest { start, size };
        assert_eq!(neighbours(p(1, 10), 35), Neighbours { first: 1, prev: None, next: Some(11), last: 31 });
        assert_eq!(neighbours(p(11, 10), 35), Neighbours { first: 1, prev: Some(1), next: Some(21), last: 31 });
        assert_eq!(neighbours(p(31, 10), 35), Neighbours { first: 1, prev: Some(21), next: None, last: 31 });
        assert_eq!(neighbours(p(5, 10), 35), Neighbours { first: 1, prev: Some(1), next: Some(15), last: 35 });
        assert_eq!(neighbours(p(1, 10), 10), Neighbours { first: 1, prev: None, next: None, last: 1 });
        assert_eq!(neighbours(p(1, 1000), 0), Neighbours { first: 1, prev: None, next: None, last: 1 });
    }
}
