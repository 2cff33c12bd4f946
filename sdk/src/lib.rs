//! The Herald guest SDK: idiomatic Rust over the `herald:platform` WIT bindings, for writing
//! extensions.
//!
//! It is empty for now: the WIT interfaces and the extension host that give it a purpose are the
//! next piece of work (issue 3). The crate exists so that the workspace has its final shape.
#![deny(missing_docs)]
