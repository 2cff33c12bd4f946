//! Filters: random text and random trees of the grammar over the demo model's fields, parsed,
//! compiled for both dialects, and run on a real SQLite database. Whatever the parser admits must
//! run (the database refusing a compiled filter is a bug: it was a 500).

use futures_util::StreamExt;
use rand::rngs::StdRng;
use rand::Rng;

use super::{cases, demo_model, rng, text};
use crate::rsql::{compile_text, Dialect, FilterError};

/// Fields of each type with values that fit them, and a field that does not exist.
const FIELDS: &[(&str, &[&str])] = &[
    ("USER_ID", &["1", "-1", "0.5", "1e19", "9007199254740991"]),
    ("AGE", &["18", "0", "-3.5"]),
    ("EMAIL", &["'a@b.c'", "*@example.com", "a*b?", "'*'", "''", "'[x]'", "'%_\\\\'", "'\\''", "\"a b\""]),
    ("CITY", &["Paris", "'Saint-Étienne'", "*is"]),
    ("BIRTHDATE", &["2024-01-31", "'31.01.2024'", "'2024-01-31T10:00:00Z'"]),
    ("CREATED_AT", &["'2024-01-31T10:00:00+02:00'", "'01.02.2024 13:04:05'", "2024-01-31"]),
    ("OPTIN", &["true", "FALSE"]),
    ("NOPE", &["1"]),
];
const OPS: &[&str] = &["==", "!=", "<", "<=", ">", ">=", "=in=", "=out=", "=gt=", "=le="];

fn value(rng: &mut StdRng, fits: &[&str]) -> String {
    match rng.gen_range(0..10) {
        0..=7 => fits[rng.gen_range(0..fits.len())].to_string(),
        8 => FIELDS[rng.gen_range(0..FIELDS.len())].1[0].to_string(),
        _ => format!("'{}'", text(rng, &[], 4).replace(['\'', '\\'], "")),
    }
}

/// A filter of the grammar: comparisons joined by and/or, in parentheses now and then.
fn filter(rng: &mut StdRng, depth: u32) -> String {
    if depth == 0 || rng.gen_bool(0.4) {
        let op = OPS[rng.gen_range(0..OPS.len())];
        let (field, fits) = FIELDS[rng.gen_range(0..FIELDS.len())];
        return if op.starts_with("=in") || op.starts_with("=out") {
            let list: Vec<String> = (0..rng.gen_range(1..6)).map(|_| value(rng, fits)).collect();
            format!("{field}{op}({})", list.join(","))
        } else {
            format!("{field}{op}{}", value(rng, fits))
        };
    }
    let glue = [";", ",", " and ", " or "][rng.gen_range(0..4)];
    let items: Vec<String> = (0..rng.gen_range(2..4)).map(|_| filter(rng, depth - 1)).collect();
    let joined = items.join(glue);
    if rng.gen_bool(0.5) {
        format!("({joined})")
    } else {
        joined
    }
}

#[tokio::test]
async fn what_the_parser_admits_compiles_and_runs() {
    let mut rng = rng("filters");
    let model = demo_model();
    let dir = tempfile::tempdir().unwrap();
    let db = crate::store::Backend::Sqlite { data_dir: dir.path().into() }.open_tenant("fuzz").await.unwrap();
    db.ensure_schema(&model).await.unwrap();
    let mut ran = 0;
    for n in 0..cases() {
        let input = match n % 4 {
            0 => text(&mut rng, &["==", "and", "or", "AGE", "EMAIL", "(", ")", "'x'", "=in=", ","], 12),
            // Long chains: the bounds of the parser, which the database must take too.
            1 if rng.gen_bool(0.05) => vec![filter(&mut rng, 0); rng.gen_range(100..=1000)].join([";", ","][rng.gen_range(0..2)]),
            _ => filter(&mut rng, 3),
        };
        for dialect in [Dialect::Sqlite, Dialect::Postgres] {
            match compile_text(&input, &model.def, &model.formats, dialect) {
                Ok(condition) => {
                    let marks = condition.sql.matches('?').count();
                    assert_eq!(marks, condition.binds.len(), "{input:?}: every value is bound: {}", condition.sql);
                    if dialect == Dialect::Sqlite {
                        let sql = db.recipients_sql(&model, Some(&condition));
                        let mut reader = db.stream_reader().await.unwrap();
                        let rows = db.recipients_stream(&mut reader, &model, Some(&condition), &sql);
                        futures_util::pin_mut!(rows);
                        while let Some(row) = rows.next().await {
                            if let Err(e) = row {
                                panic!("the database refused an admitted filter {input:?}: {e}\n{}", condition.sql);
                            }
                        }
                        ran += 1;
                    }
                }
                Err(FilterError::Invalid(m)) => assert!(!m.is_empty()),
                Err(FilterError::UnknownSelector(s)) => assert!(!s.is_empty() || input.is_empty()),
            }
        }
    }
    assert!(ran > cases() / 10, "the generator makes valid filters too ({ran} ran)");
}
