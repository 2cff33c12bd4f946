//! A recipient's communication history: what was sent to them (today by a flow's `send`), oldest
//! first.

use chrono::NaiveDateTime;
use sqlx::Row;

use super::codec::decode;
use super::schema::insertion_order;
use super::TenantDb;
use crate::model::{FieldType, Value};
use crate::store::StoreResult;

#[derive(Debug, Clone, PartialEq)]
pub struct Communication {
    pub channel: String,
    pub subject: Option<String>,
    pub sent_at: NaiveDateTime,
    /// The template rendered, as the Assets API names it (`welcome.html`).
    pub template: Option<String>,
    /// The flow that sent it.
    pub flow: Option<String>,
    /// What was rendered.
    pub content: Option<String>,
}

impl TenantDb {
    pub async fn communications(&self, key: i64) -> StoreResult<Vec<Communication>> {
        let sql = format!(
            "SELECT channel, subject, sent_at, template, flow, content FROM _communications WHERE _recipient = ? ORDER BY sent_at, {}",
            insertion_order(self.db.dialect)
        );
        let rows = sqlx::query(&self.db.sql_string(sql)).bind(key).fetch_all(&mut *self.db.reader().await?).await?;
        rows.iter()
            .map(|r| {
                let Value::Timestamp(sent_at) = decode(r, 2, FieldType::Timestamp)? else { unreachable!("not null") };
                Ok(Communication { channel: r.get(0), subject: r.get(1), sent_at, template: r.get(3), flow: r.get(4), content: r.get(5) })
            })
            .collect()
    }

    pub async fn insert_communication(&self, key: i64, c: &Communication) -> StoreResult<()> {
        let sql = self.db.sql(
            "INSERT INTO _communications (_recipient, channel, subject, sent_at, template, flow, content) VALUES (?, ?, ?, ?, ?, ?, ?)",
        );
        let mut turn = self.db.group.single_write().await?;
        let done = sqlx::query(&sql)
            .bind(key)
            .bind(&c.channel)
            .bind(&c.subject)
            .bind(c.sent_at.format("%Y-%m-%dT%H:%M:%S%.3f").to_string())
            .bind(&c.template)
            .bind(&c.flow)
            .bind(&c.content)
            .execute(&mut *turn)
            .await;
        turn.finish(done).await.map(|_| ())
    }
}
