//! The generated bindings of `herald:platform` (wit/). `platform` holds the interfaces an extension
//! imports; each `*_world` module holds one extension type's export, sharing `platform`'s types.
//! Most extensions never name these: the crate's modules and macros wrap them.
#![allow(missing_docs)]

/// Every interface an extension may import.
pub mod platform {
    wit_bindgen::generate!({
        path: "../wit",
        world: "herald:platform/imports",
        generate_all,
        additional_derives: [PartialEq],
    });
}

/// The `step-extension` world's export.
pub mod step_world {
    wit_bindgen::generate!({
        path: "../wit",
        world: "herald:platform/step-extension",
        with: {
            "herald:platform/types@0.1.0": crate::bindings::platform::herald::platform::types,
            "herald:platform/recipients-read@0.1.0": crate::bindings::platform::herald::platform::recipients_read,
            "herald:platform/recipients-write@0.1.0": crate::bindings::platform::herald::platform::recipients_write,
            "herald:platform/global-data@0.1.0": crate::bindings::platform::herald::platform::global_data,
            "herald:platform/tables@0.1.0": crate::bindings::platform::herald::platform::tables,
            "herald:platform/context@0.1.0": crate::bindings::platform::herald::platform::context,
            "herald:platform/log@0.1.0": crate::bindings::platform::herald::platform::log,
        },
        pub_export_macro: true,
        export_macro_name: "__export_step_world",
        default_bindings_module: "herald_sdk::bindings::step_world",
    });
}

/// The `condition-extension` world's export.
pub mod condition_world {
    wit_bindgen::generate!({
        path: "../wit",
        world: "herald:platform/condition-extension",
        with: {
            "herald:platform/types@0.1.0": crate::bindings::platform::herald::platform::types,
            "herald:platform/recipients-read@0.1.0": crate::bindings::platform::herald::platform::recipients_read,
            "herald:platform/recipients-write@0.1.0": crate::bindings::platform::herald::platform::recipients_write,
            "herald:platform/global-data@0.1.0": crate::bindings::platform::herald::platform::global_data,
            "herald:platform/tables@0.1.0": crate::bindings::platform::herald::platform::tables,
            "herald:platform/context@0.1.0": crate::bindings::platform::herald::platform::context,
            "herald:platform/log@0.1.0": crate::bindings::platform::herald::platform::log,
        },
        pub_export_macro: true,
        export_macro_name: "__export_condition_world",
        default_bindings_module: "herald_sdk::bindings::condition_world",
    });
}

/// The `monitor-extension` world's export.
pub mod monitor_world {
    wit_bindgen::generate!({
        path: "../wit",
        world: "herald:platform/monitor-extension",
        with: {
            "herald:platform/types@0.1.0": crate::bindings::platform::herald::platform::types,
            "herald:platform/recipients-read@0.1.0": crate::bindings::platform::herald::platform::recipients_read,
            "herald:platform/recipients-write@0.1.0": crate::bindings::platform::herald::platform::recipients_write,
            "herald:platform/global-data@0.1.0": crate::bindings::platform::herald::platform::global_data,
            "herald:platform/tables@0.1.0": crate::bindings::platform::herald::platform::tables,
            "herald:platform/context@0.1.0": crate::bindings::platform::herald::platform::context,
            "herald:platform/log@0.1.0": crate::bindings::platform::herald::platform::log,
        },
        pub_export_macro: true,
        export_macro_name: "__export_monitor_world",
        default_bindings_module: "herald_sdk::bindings::monitor_world",
    });
}

/// The `authheader-extension` world's export (it sees Global Data and the log only).
pub mod authheader_world {
    wit_bindgen::generate!({
        path: "../wit",
        world: "herald:platform/authheader-extension",
        with: {
            "herald:platform/types@0.1.0": crate::bindings::platform::herald::platform::types,
            "herald:platform/global-data@0.1.0": crate::bindings::platform::herald::platform::global_data,
            "herald:platform/log@0.1.0": crate::bindings::platform::herald::platform::log,
        },
        pub_export_macro: true,
        export_macro_name: "__export_authheader_world",
        default_bindings_module: "herald_sdk::bindings::authheader_world",
    });
}
