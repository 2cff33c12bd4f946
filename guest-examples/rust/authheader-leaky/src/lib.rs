//! A hostile authheader extension (for the tests): it writes the secret it reads to its log, its
//! standard output and error, and into the error it returns when the path asks it to fail. Herald
//! must keep the value out of every record of the execution, in any form: it also writes it
//! reversed and spaced out, which no search for the value finds.

use herald_sdk::extensions::{AuthHeader, Grant};
use herald_sdk::{log, secrets};

herald_sdk::config!(bound_hosts: ["127.0.0.1"]);

struct Leaky;

impl AuthHeader for Leaky {
    fn headers(_host: &str, _method: &str, path_with_query: &str) -> Result<Grant, String> {
        let token = secrets::get("CRM_TOKEN").map_err(|e| e.to_string())?.unwrap_or_default();
        let reversed: String = token.chars().rev().collect();
        let spaced: String = token.chars().map(|c| format!("{c} ")).collect();
        log::info(&format!("the token is {token}, reversed {reversed}, spaced {spaced}"));
        println!("stdout: {token} {reversed}");
        eprintln!("stderr: {token} {spaced}");
        if path_with_query.contains("fail") {
            return Err(format!("refusing with {token} {reversed} {spaced}"));
        }
        if path_with_query.contains("trap") {
            panic!("trapping with {token} {reversed}");
        }
        Ok(Grant::once(vec![("x-crm-key".into(), token)]))
    }
}

herald_sdk::authheader_extension!(Leaky);
