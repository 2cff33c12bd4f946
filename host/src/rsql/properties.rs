//! Property tests of the parser, run on every test run for a bounded number of cases with a fixed
//! seed (reproducible): random input never panics and is answered quickly, and any valid filter
//! printed from a random tree parses back to that tree.

use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::parse::{parse, Comparison, Node, Op};

const ALPHABET: &[char] =
    &['a', 'B', '1', '_', ' ', '\t', '\'', '"', '(', ')', ';', ',', '=', '!', '~', '<', '>', '*', '?', '\\', 'é', '%', '-', '.'];
const WORDS: &[&str] = &["and", "or", "==", "!=", "=in=", "=out=", "<=", ">=", "(", ")", "AGE", "'x'", "\"y\"", " "];

#[test]
fn random_input_never_panics_and_is_answered_quickly() {
    let mut rng = StdRng::seed_from_u64(0x4e_7261_6c64);
    for _ in 0..20_000 {
        let len = rng.gen_range(0..60);
        let input: String = (0..len)
            .map(|_| {
                if rng.gen_bool(0.3) {
                    WORDS[rng.gen_range(0..WORDS.len())].to_string()
                } else {
                    ALPHABET[rng.gen_range(0..ALPHABET.len())].to_string()
                }
            })
            .collect();
        let started = Instant::now();
        let result = parse(&input);
        assert!(started.elapsed() < Duration::from_millis(50), "slow on {input:?}");
        if let Err(e) = result {
            assert!(e.position >= 1 && e.position <= input.chars().count() + 1, "{input:?}: {e}");
        }
    }
    // Large hostile inputs stay linear.
    for input in ["(".repeat(60_000), "a==1 and ".repeat(7_000), format!("a=in=({})", "1,".repeat(20_000)), "'".repeat(60_000)] {
        let started = Instant::now();
        assert!(parse(&input).is_err());
        assert!(started.elapsed() < Duration::from_millis(500));
    }
}

fn random_value(rng: &mut StdRng) -> String {
    let pool = ["Paris", "O'Brien", "say \"hi\"", "a b", "x;y,z", "(p)", "a==b", "20", "-1.5", "é*?", "back\\slash"];
    pool[rng.gen_range(0..pool.len())].to_string()
}

fn random_tree(rng: &mut StdRng, depth: usize) -> Node {
    if depth == 0 || rng.gen_bool(0.4) {
        let ops = [Op::Eq, Op::Ne, Op::Lt, Op::Le, Op::Gt, Op::Ge, Op::In, Op::Out];
        let op = ops[rng.gen_range(0..ops.len())];
        let n = if matches!(op, Op::In | Op::Out) { rng.gen_range(1..4) } else { 1 };
        let selectors = ["AGE", "CITY", "x.y", "Ünïcode"];
        return Node::Cmp(Comparison {
            selector: selectors[rng.gen_range(0..selectors.len())].to_string(),
            op,
            args: (0..n).map(|_| random_value(rng)).collect(),
        });
    }
    let items = (0..rng.gen_range(2..4)).map(|_| random_tree(rng, depth - 1)).collect();
    if rng.gen_bool(0.5) {
        Node::And(items)
    } else {
        Node::Or(items)
    }
}

/// Prints a tree in the grammar, quoting every value and parenthesising every group.
fn print(node: &Node) -> String {
    let quote = |v: &str| format!("'{}'", v.replace('\\', "\\\\").replace('\'', "\\'"));
    match node {
        Node::Cmp(c) if matches!(c.op, Op::In | Op::Out) => {
            format!("{}{}({})", c.selector, c.op.symbol(), c.args.iter().map(|a| quote(a)).collect::<Vec<_>>().join(" or "))
        }
        Node::Cmp(c) => format!("{} {} {}", c.selector, c.op.symbol(), quote(&c.args[0])),
        Node::And(items) => format!("({})", items.iter().map(print).collect::<Vec<_>>().join(" and ")),
        Node::Or(items) => format!("({})", items.iter().map(print).collect::<Vec<_>>().join(" , ")),
    }
}

#[test]
fn printed_trees_parse_back() {
    let mut rng = StdRng::seed_from_u64(7);
    for _ in 0..3_000 {
        let tree = random_tree(&mut rng, 4);
        let text = print(&tree);
        assert_eq!(parse(&text), Ok(tree), "{text}");
    }
}
