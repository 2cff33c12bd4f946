//! A monitor with no `herald:config` section of its own (no `config!`), for the tests of what an
//! upload's configuration may say: they add a section at the component's top level, as
//! `herald extension config` does for JavaScript and Python components. Always healthy.

use herald_sdk::extensions::{Health, Monitor};

struct Bare;

impl Monitor for Bare {
    fn check() -> Health {
        Health::ok("fine".to_string())
    }
}

herald_sdk::monitor_extension!(Bare);
