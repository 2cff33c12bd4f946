//! The calls in flight of each instance across the nodes of a PostgreSQL deployment
//! (`calls_in_flight_total`, `calls_in_flight`): the spec's limit of 20 is per instance, not per
//! node. Admission is one statement: the instance's total moves up unless it is at the limit (a
//! row lock orders concurrent admissions, and PostgreSQL re-checks the condition on the row it
//! waited for), and the node's own count moves with it. Giving back is one statement too, taking
//! the rows in the same order (the total's, then the node's), so the two cannot deadlock. The
//! counts of a node that stopped beating are given back by the others (`release_silent_nodes`),
//! and a node leaving gives back its own.
//!
//! A node refused a slot asks the others for the ones they hold unused, with a notification on
//! [`SLOT_ASKS`]; each node hears them on a connection of its own ([`SlotAsks`]).
//!
//! On SQLite there is one node, and the limit stays in memory (`limits::concurrency`).

use sqlx::postgres::PgListener;
use sqlx::Row;

use super::{ControlDb, StoreResult};

impl ControlDb {
    /// Takes a slot of instance `customer_id` for `node` unless `limit` are taken across nodes.
    pub async fn take_call_slot(&self, customer_id: &str, node: &str, limit: u32) -> StoreResult<bool> {
        let take = self.db.sql(
            "WITH taken AS (
               UPDATE calls_in_flight_total SET held = held + 1 WHERE customer_id = ? AND held < ? RETURNING customer_id
             )
             INSERT INTO calls_in_flight (customer_id, node, held) SELECT customer_id, ?, 1 FROM taken
             ON CONFLICT (customer_id, node) DO UPDATE SET held = calls_in_flight.held + 1
             RETURNING held",
        );
        for first in [true, false] {
            let mut conn = self.db.writer().await?;
            let taken = sqlx::query(&take).bind(customer_id).bind(limit as i32).bind(node).fetch_optional(&mut *conn).await?;
            if taken.is_some() {
                return Ok(true);
            }
            // Refused: at the limit, or the instance's first calls (no total yet: made here, or
            // by a concurrent first call, and the update tried once more).
            if !first {
                break;
            }
            sqlx::query(&self.db.sql("INSERT INTO calls_in_flight_total (customer_id, held) VALUES (?, 0) ON CONFLICT DO NOTHING"))
                .bind(customer_id)
                .execute(&mut *conn)
                .await?;
        }
        Ok(false)
    }

    /// Asks the other nodes for their unused slots of instance `customer_id` (a call of it was
    /// refused here): every node hearing it gives them back.
    pub async fn ask_for_call_slots(&self, customer_id: &str) -> StoreResult<()> {
        sqlx::query(&self.db.sql("SELECT pg_notify(?, ?)"))
            .bind(SLOT_ASKS)
            .bind(customer_id)
            .execute(&mut *self.db.writer().await?)
            .await?;
        Ok(())
    }

    /// Gives back `count` slots `node` took for instance `customer_id`.
    pub async fn give_back_call_slots(&self, customer_id: &str, node: &str, count: u32) -> StoreResult<()> {
        // The total's row first, then the node's, as admission takes them: two statements that
        // lock the same rows in opposite orders deadlock (a give-back against an admission).
        let sql = self.db.sql(
            "WITH total AS (
               UPDATE calls_in_flight_total SET held = GREATEST(0, held - ?)
               WHERE customer_id = ? AND held > 0
                 AND EXISTS (SELECT 1 FROM calls_in_flight WHERE customer_id = ? AND node = ? AND held >= ?)
               RETURNING customer_id
             )
             UPDATE calls_in_flight SET held = held - ? WHERE customer_id IN (SELECT customer_id FROM total) AND node = ? AND held >= ?",
        );
        let n = count as i32;
        sqlx::query(&sql)
            .bind(n)
            .bind(customer_id)
            .bind(customer_id)
            .bind(node)
            .bind(n)
            .bind(n)
            .bind(node)
            .bind(n)
            .execute(&mut *self.db.writer().await?)
            .await?;
        Ok(())
    }

    /// Gives back every slot held by nodes silent since `silent_before` (or no longer listed),
    /// and by `leaving` if given: returns how many.
    pub async fn release_silent_nodes(&self, silent_before: i64, leaving: Option<&str>) -> StoreResult<i64> {
        let sql = self.db.sql(
            "WITH gone AS (
               DELETE FROM calls_in_flight
               WHERE node = ? OR node NOT IN (SELECT id FROM nodes WHERE heartbeat_at >= ?)
               RETURNING customer_id, held
             ), per_instance AS (
               SELECT customer_id, SUM(held) AS held FROM gone GROUP BY customer_id
             ), moved AS (
               UPDATE calls_in_flight_total t SET held = GREATEST(0, t.held - p.held)
               FROM per_instance p WHERE t.customer_id = p.customer_id
               RETURNING p.held
             )
             SELECT COALESCE(SUM(held), 0)::BIGINT FROM moved",
        );
        let row = sqlx::query(&sql).bind(leaving.unwrap_or("")).bind(silent_before).fetch_one(&mut *self.db.writer().await?).await?;
        Ok(row.get(0))
    }
}

/// The channel of the nodes' asks for unused slots; a notification's payload is the instance.
pub const SLOT_ASKS: &str = "herald_call_slots";

/// Where a node hears the others ask for slots: one connection, listening on [`SLOT_ASKS`].
pub struct SlotAsks(PgListener);

/// What [`SlotAsks::next`] heard.
pub enum Heard {
    /// A node was refused a slot of this instance.
    Asked(String),
    /// The connection was lost and made again: asks sent meanwhile were not heard.
    MayHaveMissed,
}

impl SlotAsks {
    /// Listens on the PostgreSQL database at `url`.
    pub async fn listen(url: &str) -> StoreResult<SlotAsks> {
        let mut listener = PgListener::connect(url).await?;
        listener.listen(SLOT_ASKS).await?;
        Ok(SlotAsks(listener))
    }

    /// The next ask; an error when the connection is lost and cannot be made again.
    pub async fn next(&mut self) -> StoreResult<Heard> {
        Ok(match self.0.try_recv().await? {
            Some(notification) => Heard::Asked(notification.payload().to_string()),
            None => Heard::MayHaveMissed,
        })
    }
}
