//! Point reads: one recipient by a unique field, or by key.
//!
//! Their statements are built once per model. A read built its `SELECT` each time: every Person
//! Data field's column quoted and joined, then, on PostgreSQL, its placeholders numbered; about
//! 2 us of CPU of a read that costs 40 to 55 in all (issue 41, `bench/profile.sh read`). On SQLite
//! a read runs on the calling thread (`direct.rs`); on PostgreSQL the reads of a busy instance go
//! several to a statement (`combined_reads.rs`), whose texts (one per count of reads) are kept
//! the same way.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use sqlx::Row;

use super::codec::{bind, AnyQuery};
use super::combined_reads::{Joined, Param, Shape, Waiting};
use super::direct;
use super::recipients::{decode_recipient, decode_typed_from, returning, select, Recipient};
use super::TenantDb;
use crate::model::{column, Model, ModelId, Value};
use crate::rsql::Dialect;
use crate::store::StoreResult;

/// The texts kept for the last model a read came with. An instance's store is read with one
/// model at a time (a changed model reopens the instance), so one entry is enough; a read with
/// another model builds that model's texts and keeps them instead.
#[derive(Debug, Default)]
pub(super) struct PointReads {
    built: RwLock<Option<(ModelId, Texts)>>,
    /// The gathered reads' texts of the last model.
    gathered: Mutex<Option<(ModelId, GatheredTexts)>>,
}

/// One text a Person Data field, then one by key.
type Texts = Arc<[Box<str>]>;

/// The texts of reads in one statement, by (field or key, room for reads).
type GatheredTexts = HashMap<(usize, usize), Arc<str>>;

impl PointReads {
    /// `model`'s texts: one a Person Data field (a read by that field), then one by key; `build`
    /// makes them the first time.
    pub(super) fn texts(&self, model: &Model, build: impl FnOnce() -> Vec<Box<str>>) -> Texts {
        if let Some((id, texts)) = &*self.built.read().unwrap_or_else(PoisonError::into_inner) {
            if *id == model.id {
                return Arc::clone(texts);
            }
        }
        let texts: Texts = build().into();
        *self.built.write().unwrap_or_else(PoisonError::into_inner) = Some((model.id, Arc::clone(&texts)));
        texts
    }

    /// `model`'s text of `count` reads by `by` in one statement; `build` makes it the first time.
    fn gathered(&self, model: &Model, by: usize, count: usize, build: impl FnOnce() -> String) -> Arc<str> {
        let mut gathered = self.gathered.lock().unwrap_or_else(PoisonError::into_inner);
        if gathered.as_ref().is_none_or(|(id, _)| *id != model.id) {
            *gathered = Some((model.id, HashMap::new()));
        }
        let (_, texts) = gathered.as_mut().expect("set above");
        Arc::clone(texts.entry((by, count)).or_insert_with(|| build().into()))
    }
}

/// The value a point read looks for, borrowed from its caller.
#[derive(Clone, Copy)]
enum Looked<'a> {
    Value(&'a Value),
    Key(i64),
}

impl<'a> Looked<'a> {
    fn owned(self) -> Param {
        match self {
            Looked::Value(v) => Param::Value(v.clone()),
            Looked::Key(k) => Param::Key(k),
        }
    }

    /// The value a waiting read looks for.
    fn of(param: &'a Param) -> Looked<'a> {
        match param {
            Param::Value(v) => Looked::Value(v),
            Param::Key(k) => Looked::Key(*k),
        }
    }

    fn bind<'q>(self, query: AnyQuery<'q>) -> AnyQuery<'q> {
        match self {
            Looked::Value(value) => bind(query, value),
            Looked::Key(key) => query.bind(key),
        }
    }
}

/// The column a point read by `by` looks in: a Person Data field's, or past the last, the key.
fn looked_in(model: &Model, by: usize) -> String {
    model.def.person_data.get(by).map_or_else(|| "_id".to_string(), |f| column(&f.name))
}

impl TenantDb {
    /// The recipient whose unique field `field` holds `value`.
    pub async fn find_recipient(&self, model: &Model, field: usize, value: &Value) -> StoreResult<Option<Recipient>> {
        let texts = self.point_read_texts(model);
        if let Some(read) = self.direct_recipient(model, &texts[field], direct::stored(value)) {
            return read;
        }
        self.point_read(model, &texts, field, Looked::Value(value)).await
    }

    /// The recipient stored under `key`.
    pub async fn recipient_by_key(&self, model: &Model, key: i64) -> StoreResult<Option<Recipient>> {
        let texts = self.point_read_texts(model);
        let by = model.def.person_data.len();
        if let Some(read) = self.direct_recipient(model, &texts[by], rusqlite::types::Value::Integer(key)) {
            return read;
        }
        self.point_read(model, &texts, by, Looked::Key(key)).await
    }

    /// The `SELECT` of one recipient by each Person Data field, then by key, in this store's
    /// dialect.
    fn point_read_texts(&self, model: &Model) -> Texts {
        self.point_reads.texts(model, || {
            let select = select(model);
            (0..=model.def.person_data.len())
                .map(|by| self.db.sql_string(format!("{select} WHERE {} = ?", looked_in(model, by))).into_boxed_str())
                .collect()
        })
    }

    /// A point read through sqlx: on PostgreSQL with the instance's other reads in flight
    /// (`combined_reads.rs`).
    async fn point_read(&self, model: &Model, texts: &Texts, by: usize, looked: Looked<'_>) -> StoreResult<Option<Recipient>> {
        if self.dialect() != Dialect::Postgres {
            return self.read_alone(model, &texts[by], looked).await;
        }
        let shape = Shape { model: model.id, by };
        match self.combined_reads.join(shape, || looked.owned()).await {
            Joined::Read(found) => Ok(found),
            Joined::Alone => self.read_alone(model, &texts[by], looked).await,
            Joined::Lead(lead) if lead.others.is_empty() => {
                let read = self.read_alone(model, &texts[by], looked).await;
                drop(lead);
                read
            }
            Joined::Lead(lead) => match self.read_together(model, by, looked, &lead.others).await {
                Ok(mut found) => {
                    let own = found.remove(0);
                    lead.answer(found);
                    Ok(own)
                }
                Err(e) => {
                    // Every read of the statement reads alone (the others when they find no answer).
                    tracing::debug!(error = %e, "gathered point reads failed together; each is read alone");
                    drop(lead);
                    self.read_alone(model, &texts[by], looked).await
                }
            },
        }
    }

    async fn read_alone(&self, model: &Model, sql: &str, looked: Looked<'_>) -> StoreResult<Option<Recipient>> {
        let row = looked.bind(sqlx::query(sql)).fetch_optional(&mut *self.db.reader().await?).await?;
        Ok(row.map(|r| decode_recipient(model, &r)).transpose()?)
    }

    /// `own` and `others` read in one statement: a `SELECT` of each, tagged with its place,
    /// joined by `UNION ALL`. What each found, `own`'s first. The statement has room for a power
    /// of two of reads (the places past the last read look for `own` again, and their rows are
    /// left aside), so that an instance's connections keep 4 such statements, not 15.
    async fn read_together(&self, model: &Model, by: usize, own: Looked<'_>, others: &[Waiting]) -> StoreResult<Vec<Option<Recipient>>> {
        let count = others.len() + 1;
        let room = count.next_power_of_two();
        let sql = self.point_reads.gathered(model, by, room, || {
            let (columns, looked_in) = (returning(model), looked_in(model, by));
            let one = |place: usize| format!("SELECT {place}, {columns} FROM recipients WHERE {looked_in} = ?");
            self.db.sql_string((0..room).map(one).collect::<Vec<_>>().join(" UNION ALL "))
        });
        let others = others.iter().map(|w| Looked::of(&w.param));
        let mut query = sqlx::query(&sql);
        for looked in std::iter::once(own).chain(others).chain(std::iter::repeat_n(own, room - count)) {
            query = looked.bind(query);
        }
        let rows = query.fetch_all(&mut *self.db.reader().await?).await?;
        let mut found: Vec<Option<Recipient>> = vec![None; count];
        let types = || model.def.person_data.iter().map(|f| f.ty);
        for row in rows {
            let place: i32 = row.try_get(0)?;
            if let Some(slot) = usize::try_from(place).ok().and_then(|p| found.get_mut(p)) {
                *slot = Some(decode_typed_from(types(), &row, 1)?);
            }
        }
        self.db.count_gathered_reads(count);
        Ok(found)
    }

    /// A point read of one recipient on the calling thread (SQLite, `direct.rs`); `None` on
    /// PostgreSQL, or when it would wait: the sqlx path reads it then.
    fn direct_recipient(&self, model: &Model, sql: &str, param: rusqlite::types::Value) -> Option<StoreResult<Option<Recipient>>> {
        self.direct.as_ref()?.read(|conn| {
            direct::first_row(conn, sql, &[param], |row| {
                let mut values = Vec::with_capacity(model.def.person_data.len());
                for (i, field) in model.def.person_data.iter().enumerate() {
                    values.push(direct::read(row.get_ref(i + 1).map_err(direct::failed)?, field.ty)?);
                }
                Ok(Recipient { key: row.get(0).map_err(direct::failed)?, values })
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::PointReads;

    #[test]
    fn built_once_for_a_model_and_again_for_another() {
        let reads = PointReads::default();
        let model = crate::fuzz::demo_model();
        let mut builds = 0;
        for _ in 0..3 {
            let texts = reads.texts(&model, || {
                builds += 1;
                vec!["first".into()]
            });
            assert_eq!(&*texts[0], "first");
        }
        assert_eq!(builds, 1);
        let clone = model.clone();
        assert_eq!(&*reads.texts(&clone, || vec!["not built".into()])[0], "first", "a clone is the same model");
        let changed = crate::fuzz::demo_model();
        assert_eq!(&*reads.texts(&changed, || vec!["second".into()])[0], "second", "another model gets its own texts");
        assert_eq!(&*reads.texts(&model, || vec!["third".into()])[0], "third", "only the last model's are kept");
    }
}
