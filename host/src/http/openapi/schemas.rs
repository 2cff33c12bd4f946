//! The shapes of the API's bodies: the handlers answer with these types (so a response cannot
//! leave its schema without the compiler or the contract test noticing), and the document
//! describes them for client generators. Records and recipients stay open objects here: their
//! members are the instance's fields, which the instance's own document names (`instance.rs`).
//! Request bodies are described by the types marked "Described only": the handlers read those
//! bodies member by member, so that a 400 names the member at fault (docs/api.md).

use std::collections::HashMap;

use serde::Serialize;
use serde_json::Value as Json;
use utoipa::ToSchema;

pub use super::flow_schemas::{Flow, FlowFiring, FlowRun, FlowSchedule};

pub use super::bulk_schemas::{Import, ImportStarted, RejectedRow};

/// A client error: what is wrong, for a person to read.
#[derive(Serialize, ToSchema)]
pub struct Message {
    #[schema(example = "the body is not valid JSON: expected value at line 1 column 1")]
    pub message: String,
}

/// The token endpoint's refusal (RFC 6749 5.2) with Herald's explanation.
#[derive(Serialize, ToSchema)]
pub struct OAuthError {
    #[schema(example = "invalid_request")]
    pub error: String,
    pub message: String,
}

/// The form of `POST /oauth2/token`.
#[allow(dead_code)] // Described only.
#[derive(Serialize, ToSchema)]
pub struct TokenRequest {
    #[schema(example = "client_credentials")]
    pub grant_type: String,
    /// The Developer Key (or in a Basic authorization header instead).
    pub client_id: Option<String>,
    /// The Secret (or in a Basic authorization header instead).
    pub client_secret: Option<String>,
}

/// An access token: sent as `Authorization: Bearer <access_token>` until it expires.
#[derive(Serialize, ToSchema)]
pub struct Token {
    pub access_token: String,
    #[schema(example = "Bearer")]
    pub token_type: String,
    /// Seconds the token stays valid (two hours).
    #[schema(example = 7200)]
    pub expires_in: i64,
    /// The credential's scope: `public` or `app`.
    #[schema(example = "public")]
    pub scope: String,
}

/// A recipient. `personData` maps the instance's Person Data field names to their values
/// (every field on reads, empty ones null; on writes, the fields to set, null or "" to clear).
#[allow(dead_code)] // Described only.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Recipient {
    pub person_data: PersonData,
}

/// The instance's Person Data fields and their values.
#[allow(dead_code)] // Described only.
#[derive(Serialize, ToSchema)]
pub struct PersonData(HashMap<String, serde_json::Value>);

/// A record of a One-To-Many table or a Global Data Table: its fields and their values.
#[allow(dead_code)] // Described only.
#[derive(Serialize, ToSchema)]
pub struct Record(HashMap<String, serde_json::Value>);

/// A page of a paged recipients document (`objectResponse=true`).
#[derive(Serialize, ToSchema)]
pub struct RecipientPage {
    /// `first`, `self`, `last`, and `prev` and `next` where there is such a page.
    pub links: Vec<Link>,
    /// Recipients in their JSON form (`recipients/json.rs`), which the instance's fields shape.
    #[schema(value_type = Vec<Recipient>)]
    pub content: Vec<Json>,
    pub page: PageInfo,
}

#[derive(Serialize, ToSchema)]
pub struct Link {
    #[schema(example = "next")]
    pub rel: String,
    pub href: String,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PageInfo {
    pub document_id: String,
    pub page_start: u64,
    pub page_size: u64,
    /// The current page, from 1.
    pub number: u64,
    pub total_elements: u64,
    pub total_pages: u64,
}

/// The outcome of a batch, entry by entry in request order.
#[derive(Serialize, ToSchema)]
pub struct BatchReport {
    pub results: Vec<BatchEntry>,
    pub succeeded: u64,
    pub failed: u64,
}

#[derive(Serialize, ToSchema)]
pub struct BatchEntry {
    pub index: u64,
    /// The entry's identifier as it was sent, where it has one.
    #[schema(value_type = Value)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<Json>,
    /// `created`, `updated`, `deleted`, `notFound` or `invalid`.
    pub status: String,
    /// Why an `invalid` entry was refused.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// An event a recipient achieved.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    pub event_id: String,
    /// In the instance's timestamp format.
    pub achieved_at: String,
}

/// An achieved event and the flow runs it started.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AchievedEvent {
    pub event_id: String,
    pub achieved_at: String,
    /// The ids of the runs the event started (see `GET /flows/{name}/runs/{runId}`).
    pub flow_runs: Vec<String>,
}

/// Contextual data for the flows an event triggers: `name` names the Context Parameter Schema
/// the data follows, the other members are its models (docs/flows.md).
#[allow(dead_code)] // Described only.
#[derive(Serialize, ToSchema)]
pub struct ContextualData(HashMap<String, serde_json::Value>);

/// A target group or promotion the recipient satisfies.
#[derive(Serialize, ToSchema)]
pub struct NamedFilter {
    pub name: String,
    pub description: Option<String>,
}

/// A communication sent to the recipient.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Communication {
    pub channel: String,
    pub subject: Option<String>,
    pub sent_at: String,
    pub template: Option<String>,
    pub flow: Option<String>,
    pub content: Option<String>,
}

/// A Global Data item, list form.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "UPPERCASE")]
pub struct GlobalDataItem {
    pub name: String,
    #[schema(example = "STRING")]
    pub r#type: String,
    pub description: String,
}

/// A Global Data item with its value.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "UPPERCASE")]
pub struct GlobalDataValue {
    pub name: String,
    pub r#type: String,
    pub value: String,
    pub description: String,
    /// `true` or `false`.
    pub publish: String,
    /// Milliseconds since 1970 (UTC) when the value was first set, `0` never.
    pub created: String,
    /// Milliseconds since 1970 (UTC) of the last change, `0` never.
    pub modified: String,
}

/// The body of `PUT /globaldata/{name}`: the value as text (a number or boolean is taken as its
/// text), null or "" to clear it.
#[allow(dead_code)] // Described only.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "UPPERCASE")]
pub struct GlobalDataUpdate {
    pub value: Option<String>,
}

/// A field of a data model.
#[derive(Serialize, ToSchema)]
pub struct FieldDefinition {
    pub name: String,
    pub identifier: bool,
    /// `STRING`, `NUMBER`, `BOOLEAN`, `DATE` or `TIMESTAMP`.
    pub r#type: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// A Person Data field.
#[derive(Serialize, ToSchema)]
pub struct PersonDataField {
    #[serde(flatten)]
    pub field: FieldDefinition,
    /// No two recipients share a value of this field.
    pub unique: bool,
}

/// An event of the instance.
#[derive(Serialize, ToSchema)]
pub struct EventDefinition {
    #[schema(example = "WELCOME")]
    pub name: String,
    pub description: Option<String>,
}

/// A target group or promotion: a saved RSQL filter on Person Data (empty: every recipient).
#[derive(Serialize, ToSchema)]
pub struct SegmentDefinition {
    #[schema(example = "ADULTS")]
    pub name: String,
    pub description: Option<String>,
    #[schema(example = "AGE>=18")]
    pub filter: String,
}

/// The Person Data definition.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PersonDataDefinition {
    /// The field that identifies a recipient.
    pub recipient_id: String,
    pub fields: Vec<PersonDataField>,
}

/// The instance's date and timestamp patterns (Java style: `yyyy`, `yy`, `MM`, `dd`, `HH`, `mm`,
/// `ss`, `SSS`, text in single quotes), in which the API writes and reads DATE and TIMESTAMP
/// values and its own times (`achievedAt`, `startedAt`, `createdAt`...), all in UTC.
#[derive(Serialize, ToSchema)]
pub struct Formats {
    /// The pattern of a date, such as `dd.MM.yyyy`.
    #[schema(example = "dd.MM.yyyy")]
    pub date: String,
    /// The pattern of a timestamp, such as `dd.MM.yyyy HH:mm:ss`.
    #[schema(example = "dd.MM.yyyy HH:mm:ss")]
    pub timestamp: String,
}

/// A One-To-Many table or Global Data Table definition.
#[derive(Serialize, ToSchema)]
pub struct TableDefinition {
    pub name: String,
    pub fields: Vec<FieldDefinition>,
    /// Global Data Tables only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// A secret of the instance: never its value.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Secret {
    pub name: String,
    pub set_at: String,
}

/// The body of `PUT /extensions/secrets/{name}`.
#[allow(dead_code)] // Described only.
#[derive(Serialize, ToSchema)]
pub struct SecretValue {
    pub value: String,
}

/// A monitor extension with its schedule and newest reports.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Monitor {
    pub id: String,
    pub schedule: Option<String>,
    pub next_run_at: Option<String>,
    pub alert: Option<MonitorAlert>,
    /// `healthy`, `unhealthy`, `failed` or `pending`.
    pub status: String,
    pub last_run: Option<MonitorRun>,
    pub history: Vec<MonitorRun>,
}

/// What a monitor does when its status changes: achieve `event` for the recipient whose
/// Recipient Id is `recipient` (docs/secrets.md, Monitors).
#[derive(Serialize, ToSchema)]
pub struct MonitorAlert {
    pub event: String,
    #[schema(value_type = Value)]
    pub recipient: Json,
}

/// One run of a monitor.
#[derive(Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MonitorRun {
    pub at: String,
    /// `healthy`, `unhealthy` or `failed`.
    pub status: String,
    pub message: String,
    pub duration_ms: i64,
}

/// One execution of an extension.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Execution {
    /// Milliseconds since 1970 (UTC).
    pub at: i64,
    pub duration_ms: i64,
    /// How it ended: `ok`; `error` (the extension's own: a returned error, an http answer 5xx);
    /// `deadline`; `cpu` (its CPU budget, `cpu_ms`); `memory` (its cap); `trap` (a panic, no
    /// answer); `fault` (Herald's).
    #[schema(example = "error")]
    pub outcome: &'static str,
    /// Why, for an outcome other than `ok` (`answered 500`, `wasm trap: unreachable`...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The lines the extension wrote through the `log` interface.
    pub log: Vec<String>,
    pub stdout: String,
    pub stderr: String,
    /// What a failed execution was given, credentials withheld.
    #[schema(value_type = Option<Object>)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input: Option<Json>,
    /// What it used, its receipt (absent from executions recorded before receipts were kept).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<ExecutionUsage>,
}

/// What one execution used. CPU time is the processor's time on the execution's turns of the
/// node's guest threads (a turn of 1 ms or more measured on the thread's CPU clock, a shorter one
/// on the monotonic clock); time waiting for I/O (its host calls, outbound requests) is in the
/// wall time and in neither of the others; `waitUs` is the time it waited for a turn while other
/// executions had them.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExecutionUsage {
    pub cpu_us: u64,
    pub wall_us: u64,
    pub wait_us: u64,
    /// The most linear memory its instances had during the execution.
    pub peak_memory_bytes: u64,
    /// Calls of `herald:platform` (recipients, tables, Global Data, context, log, secrets,
    /// signatures).
    pub host_calls: u64,
    pub outbound_requests: u64,
    /// The bytes of its outbound requests' bodies and of their answers' bodies.
    pub outbound_bytes: u64,
    /// Records its writes through `herald:platform` created, changed or deleted.
    pub rows_written: u64,
}

impl From<crate::store::tenant::Usage> for ExecutionUsage {
    fn from(u: crate::store::tenant::Usage) -> Self {
        ExecutionUsage {
            cpu_us: u.cpu_us,
            wall_us: u.wall_us,
            wait_us: u.wait_us,
            peak_memory_bytes: u.peak_memory_bytes,
            host_calls: u.host_calls,
            outbound_requests: u.outbound_requests,
            outbound_bytes: u.outbound_bytes,
            rows_written: u.rows_written,
        }
    }
}

/// The handle of an asynchronous extension execution.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct QueueHandle {
    pub queue_id: String,
}

/// A registered recipient.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Registered {
    /// The new recipient's Recipient Id.
    #[schema(value_type = Value)]
    pub recipient_id: Json,
}

/// An item or folder of an asset list.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AssetListItem {
    pub name: String,
    pub is_folder: bool,
    /// Items of resources and templates: whether a template references it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub referenced: Option<bool>,
    /// Extensions: the extension type.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub r#type: Option<String>,
    /// Extensions: the file's size in bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Extensions: the configuration Herald applies (its `herald:config` with the defaults filled
    /// in: `open`, `async`, `allowed_hosts`, and the limits, schedule, alert, bound hosts and
    /// reuse the extension sets).
    #[schema(value_type = Option<Object>)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config: Option<Json>,
    /// Http extensions: where it is called, a path on this server (the open endpoint with the
    /// instance's customerId, or the secure endpoint; a folder's `/` written `%252F`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

impl AssetListItem {
    /// An item or folder with none of the kind-specific members.
    pub fn new(name: &str, is_folder: bool) -> AssetListItem {
        AssetListItem { name: name.into(), is_folder, referenced: None, r#type: None, size: None, config: None, url: None }
    }
}

/// A stored asset.
#[derive(Serialize, ToSchema)]
pub struct StoredAsset {
    /// `<kind>/<folder>/<name>`.
    pub path: String,
    pub size: u64,
    /// Extensions: the type and the content's SHA-256.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub r#type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// An http extension: where it is called, a path on this server (the open endpoint with the
    /// instance's customerId, or the secure endpoint; a folder's `/` written `%252F`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

/// A stored webapp and where it is served.
#[derive(Serialize, ToSchema)]
pub struct StoredWebapp {
    pub name: String,
    pub url: String,
}

/// A committed template.
#[derive(Serialize, ToSchema)]
pub struct CommittedTemplate {
    pub path: String,
    pub committed: bool,
}

/// An asset form: `file` is the uploaded file (or, to delete or commit, the item's path as
/// text); `folder` an optional folder path.
#[allow(dead_code)] // Described only.
#[derive(Serialize, ToSchema)]
pub struct AssetForm {
    #[schema(value_type = String, format = Binary)]
    pub file: Vec<u8>,
    pub folder: Option<String>,
}

/// An extension upload: `type` is `http`, `step`, `condition`, `monitor` or `authheader`.
#[allow(dead_code)] // Described only.
#[derive(Serialize, ToSchema)]
pub struct ExtensionForm {
    #[schema(value_type = String, format = Binary)]
    pub file: Vec<u8>,
    pub folder: Option<String>,
    pub r#type: Option<String>,
}

/// The names of a delete or commit form.
#[allow(dead_code)] // Described only.
#[derive(Serialize, ToSchema)]
pub struct AssetPathForm {
    /// The item's path.
    pub file: String,
    pub folder: Option<String>,
}

/// The answer of `GET /recipients`: every recipient, or a page of a paged document.
#[allow(dead_code)] // Described only.
#[derive(Serialize, ToSchema)]
#[serde(untagged)]
pub enum Recipients {
    All(Vec<Recipient>),
    Page(RecipientPage),
}

/// How many records a truncation deleted.
#[derive(Serialize, ToSchema)]
pub struct Truncated {
    pub deleted: u64,
}
