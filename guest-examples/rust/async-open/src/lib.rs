//! An open, asynchronous extension for the tests of the queue (see async_jobs.rs).

#[used]
#[link_section = "herald:config"]
static HERALD_CONFIG: [u8; 29] = *br#"{"open": true, "async": true}"#;

include!("../../async_jobs.rs");
