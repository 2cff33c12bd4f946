//! An instance's data model: the operator's declarative definition, its validation, the typed
//! values of its fields, and the plan for changing a live instance without losing data.

pub mod cron;
pub mod definition;
pub mod event_graph;
pub mod evolve;
pub mod fields;
pub mod flow;
mod validate;

pub use definition::{
    DataModel, DefinitionFile, Environment, GlobalDataDef, InstanceSettings, NamedFilter, PersonField, TableDef, TableField, DEMO,
};
// The typed values are a module below both the model and the filters (`rsql`); the model's users
// reach them through here too.
pub use crate::values::Value;
pub use crate::values::{FieldType, Formats, Pattern};
pub use validate::{validate_customer_id, validate_settings};

use crate::rsql::Selectors;

/// A validated data model with its compiled formats.
#[derive(Debug, Clone)]
pub struct Model {
    pub def: DataModel,
    pub formats: Formats,
    /// Which built model this is (its clones share it): what the store keeps the statements it
    /// derives from a model under (`store/tenant/point_reads.rs`). A model never changes once
    /// built, so neither do they.
    pub id: ModelId,
}

/// A model's identity, unique among the models this process has built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelId(u64);

impl ModelId {
    fn next() -> ModelId {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        ModelId(NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
    }
}

impl Model {
    /// Validates `def`; the error lists every problem found, one per line.
    pub fn new(def: DataModel) -> Result<Model, String> {
        let formats = Formats::new(&def.date_format, &def.timestamp_format)?;
        let model = Model { def, formats, id: ModelId::next() };
        let problems = validate::problems(&model);
        if problems.is_empty() {
            Ok(model)
        } else {
            Err(problems.join("\n"))
        }
    }
}

/// The SQL column that holds a field: its name, quoted. Names are validated to be plain
/// identifiers, and internal columns start with `_`, so the two never meet.
pub fn column(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// Filters on recipients select Person Data fields by name.
impl Selectors for DataModel {
    fn lookup(&self, selector: &str) -> Option<(String, FieldType)> {
        self.person_field(selector).map(|f| (column(&f.name), f.ty))
    }
}

/// Filters on table records select the table's fields by name.
impl Selectors for TableDef {
    fn lookup(&self, selector: &str) -> Option<(String, FieldType)> {
        self.field(selector).map(|f| (column(&f.name), f.ty))
    }
}
