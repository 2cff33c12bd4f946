//! The end-to-end suite, one test binary (so that wasmtime and the host are linked once, not once
//! per file): a module per area, each opening with what it covers.

mod assets;
mod auth;
mod authheaders;
mod author_tools;
mod authoring;
mod bulk;
mod bulk_records;
mod cli;
mod cluster;
mod conventions;
mod docs;
mod extensions;
mod filters;
mod flow_runs;
mod flow_schedules;
mod flows;
mod global_data;
mod hardening;
mod hostile_surfaces;
mod kinds;
mod languages;
mod limits;
mod monitors;
mod nodes;
mod openapi;
mod ops;
mod outcomes;
mod paging;
mod platform;
mod queue;
mod recipient_data;
mod recipients;
mod secrets;
mod signatures;
mod tenancy;
