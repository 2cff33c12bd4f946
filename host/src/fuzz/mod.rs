//! Randomised tests of the pure parsers that take customer input: filters (parsed, compiled and
//! run on a real SQLite database), date patterns and values, the recipient identifier of a path,
//! the `herald:config` section, and Context Parameter Schemas with their data. Each target gets
//! random text, structured input built from the grammar it expects, and mutations of valid
//! input; none may panic, and each checks the invariants of what it accepts.
//!
//! Run length: `HERALD_FUZZ_CASES` cases per target (default 2,000 on every test run, with a
//! fixed seed so a failure reproduces); a long run:
//!
//! ```sh
//! HERALD_FUZZ_CASES=200000 HERALD_FUZZ_SEED=$RANDOM cargo test --release -p herald-host fuzz::
//! ```
//!
//! prints the seed it used first, so whatever it finds can be replayed.

mod config;
mod contexts;
mod filters;
mod flows;
mod values;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// How many cases each target runs.
pub fn cases() -> usize {
    std::env::var("HERALD_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(2_000)
}

/// The generator of a target: seeded from `HERALD_FUZZ_SEED` (default fixed) and the target's
/// name, so targets do not share a sequence.
pub fn rng(target: &str) -> StdRng {
    let seed: u64 = std::env::var("HERALD_FUZZ_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(0x6865_7261_6c64);
    let mixed = target.bytes().fold(seed, |h, b| h.rotate_left(7) ^ u64::from(b));
    eprintln!("fuzz target {target}: seed {seed}, {} cases", cases());
    StdRng::seed_from_u64(mixed)
}

/// Characters that break parsers: quotes, escapes, separators, control characters, NUL,
/// non-ASCII, digits and signs.
const HOSTILE: &[char] = &[
    '\0', '\u{7}', '\n', '\t', ' ', '\'', '"', '\\', '/', '%', '*', '?', '(', ')', '[', ']', '{', '}', ',', ';', ':', '=', '!', '<', '>',
    '-', '+', '.', 'e', 'E', '0', '1', '9', 'a', 'Z', 'é', '😀', '\u{202e}', '\u{ffff}',
];

/// Random text: hostile characters, words of the target's vocabulary, and long runs.
pub fn text(rng: &mut StdRng, words: &[&str], max_parts: usize) -> String {
    let parts = rng.gen_range(0..=max_parts);
    let mut out = String::new();
    for _ in 0..parts {
        match rng.gen_range(0..10) {
            0..=4 => out.push(HOSTILE[rng.gen_range(0..HOSTILE.len())]),
            5..=8 if !words.is_empty() => out.push_str(words[rng.gen_range(0..words.len())]),
            _ => {
                let c = HOSTILE[rng.gen_range(0..HOSTILE.len())];
                out.extend(std::iter::repeat_n(c, rng.gen_range(1..300)));
            }
        }
    }
    out
}

/// `valid` with a few random edits (deleted, repeated or replaced characters).
pub fn mutate(rng: &mut StdRng, valid: &str) -> String {
    let mut chars: Vec<char> = valid.chars().collect();
    for _ in 0..rng.gen_range(1..4) {
        let at = rng.gen_range(0..=chars.len());
        match rng.gen_range(0..3) {
            0 if at < chars.len() => {
                chars.remove(at);
            }
            1 if at < chars.len() => {
                let c = chars[at];
                chars.insert(at, c);
            }
            _ => chars.insert(at, HOSTILE[rng.gen_range(0..HOSTILE.len())]),
        }
    }
    chars.into_iter().collect()
}

/// The demo instance's data model: the fields and tables the targets work against.
pub fn demo_model() -> crate::model::Model {
    let file = crate::model::DefinitionFile::from_toml(crate::model::DEMO).expect("the demo definition parses");
    crate::model::Model::new(file.model).expect("the demo model is valid")
}
