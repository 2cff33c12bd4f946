//! `herald seed`: fills an instance with generated recipients, with a progress bar, for trying
//! filters and paging on real volumes. Values are deterministic for a given start number.

use indicatif::{ProgressBar, ProgressStyle};

use crate::model::{FieldType, Model, Value};
use crate::store::TenantDb;

const FIRST_NAMES: [&str; 8] = ["Anna", "Ben", "Chloé", "David", "Emma", "Farid", "Grace", "Hugo"];
const LAST_NAMES: [&str; 8] = ["Martin", "Bernard", "Dubois", "Smith", "Müller", "Rossi", "García", "Nowak"];
const CITIES: [&str; 6] = ["Paris", "Lyon", "Berlin", "Madrid", "Rome", "London"];
const COUNTRIES: [&str; 6] = ["FR", "FR", "DE", "ES", "IT", "GB"];

/// Generated Person Data for recipient number `n` (values for the fields this model has).
pub fn generate(model: &Model, n: u64) -> Vec<Value> {
    let city = (n % 6) as usize;
    model
        .def
        .person_data
        .iter()
        .map(|f| match (f.name.as_str(), f.ty) {
            (name, FieldType::Number) if name == model.def.recipient_id => Value::Number(n as f64),
            ("EMAIL", _) => Value::Text(format!("user{n}@example.com")),
            ("MOBILE", _) => Value::Text(format!("+3361{n:07}")),
            ("FIRST_NAME", _) => Value::Text(FIRST_NAMES[(n % 8) as usize].into()),
            ("LAST_NAME", _) => Value::Text(LAST_NAMES[(n / 8 % 8) as usize].into()),
            ("CITY", _) => Value::Text(CITIES[city].into()),
            ("COUNTRY", _) => Value::Text(COUNTRIES[city].into()),
            ("AGE", _) => Value::Number((10 + n * 7 % 70) as f64),
            ("SCORE", _) => Value::Number((n * 37 % 1000) as f64 / 10.0),
            (_, FieldType::Boolean) => Value::Bool(n % 2 == 0),
            (_, FieldType::Date) => Value::Date(
                chrono::NaiveDate::from_ymd_opt(1950 + (n % 60) as i32, 1 + (n % 12) as u32, 1 + (n % 28) as u32).expect("valid"),
            ),
            (_, FieldType::Timestamp) => Value::Timestamp(
                chrono::DateTime::from_timestamp(1_700_000_000 + (n as i64 * 61) % 31_536_000, 0).expect("valid").naive_utc(),
            ),
            (_, FieldType::Number) => Value::Number((n % 100) as f64),
            (name, FieldType::String) if f.unique => Value::Text(format!("{name}-{n}")),
            (_, FieldType::String) => Value::Null,
        })
        .collect()
}

/// Inserts `count` recipients numbered after the highest existing Recipient Id.
pub async fn seed(db: &TenantDb, model: &Model, count: u64, show_progress: bool) -> anyhow::Result<u64> {
    let start = db.max_numeric_recipient_id(model).await? + 1;
    let bar = if show_progress { ProgressBar::new(count) } else { ProgressBar::hidden() };
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {wide_bar} {pos}/{len} recipients ({per_sec}, eta {eta})")
            .expect("valid template"),
    );
    const CHUNK: u64 = 5_000;
    let mut done = 0;
    while done < count {
        let n = CHUNK.min(count - done);
        let rows: Vec<Vec<Value>> = (start + done..start + done + n).map(|i| generate(model, i)).collect();
        db.insert_recipients(model, &rows).await?;
        done += n;
        bar.set_position(done);
    }
    bar.finish();
    Ok(done)
}
