//! The declarative definition of instances and their data model, as the operator writes it in a
//! TOML file (`herald instance apply FILE`). One file names one or more instances that share one
//! data model (a production instance and its staging twin, typically).

use serde::{Deserialize, Serialize};

use crate::values::FieldType;

/// Production or staging: decides the default daily call cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Environment {
    Production,
    Staging,
}

impl Environment {
    pub fn name(self) -> &'static str {
        match self {
            Environment::Production => "production",
            Environment::Staging => "staging",
        }
    }
}

/// One instance (tenant) named by a definition file.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InstanceSettings {
    pub customer_id: String,
    pub environment: Environment,
    /// Licensed Unique Active Recipients (production instances).
    #[serde(default)]
    pub licensed_uar: Option<u64>,
    /// Operator override of the daily call cap.
    #[serde(default)]
    pub daily_cap: Option<u64>,
    /// Its share of the node's guest threads against the other instances with work to run, as a
    /// weight from 1 to 10,000 (100 when unset): two instances of weights 100 and 300 that both
    /// keep extensions busy get a quarter and three quarters of the processor time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_weight: Option<u32>,
}

/// The CPU weight of an instance whose definition sets none, and the range of the setting.
pub const DEFAULT_CPU_WEIGHT: u32 = 100;
pub const MAX_CPU_WEIGHT: u32 = 10_000;

impl InstanceSettings {
    /// Its weight in the fair share of the node's guest threads (`cpu_weight`).
    pub fn cpu_weight(&self) -> u32 {
        self.cpu_weight.unwrap_or(DEFAULT_CPU_WEIGHT)
    }

    /// The daily call cap: the override, or 5 × licensed UAR in production, 5000 in staging.
    pub fn effective_daily_cap(&self) -> u64 {
        match (self.daily_cap, self.environment) {
            (Some(cap), _) => cap,
            (None, Environment::Production) => 5 * self.licensed_uar.unwrap_or(0),
            (None, Environment::Staging) => 5000,
        }
    }
}

/// A Person Data field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PersonField {
    pub name: String,
    #[serde(rename = "type")]
    pub ty: FieldType,
    #[serde(default)]
    pub unique: bool,
    #[serde(default)]
    pub description: Option<String>,
}

/// A field of a One-To-Many or Global Data table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableField {
    pub name: String,
    #[serde(rename = "type")]
    pub ty: FieldType,
    #[serde(default)]
    pub identifier: bool,
    #[serde(default)]
    pub description: Option<String>,
}

/// A One-To-Many table or a Global Data Table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableDef {
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    pub fields: Vec<TableField>,
}

impl TableDef {
    pub fn identifier(&self) -> &TableField {
        &self.fields[self.identifier_index()]
    }

    /// The index of the identifier field among `fields`.
    pub fn identifier_index(&self) -> usize {
        self.fields.iter().position(|f| f.identifier).expect("validated: one identifier per table")
    }

    pub fn field(&self, name: &str) -> Option<&TableField> {
        self.fields.iter().find(|f| f.name == name)
    }
}

/// A Global Data item with its value at creation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GlobalDataDef {
    pub name: String,
    #[serde(rename = "type")]
    pub ty: FieldType,
    #[serde(default)]
    pub value: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default = "default_true")]
    pub publish: bool,
}

fn default_true() -> bool {
    true
}

/// An event that recipients can achieve.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventDef {
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
}

/// A target group or a promotion: a name and an RSQL filter on Person Data (empty: everyone).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NamedFilter {
    pub name: String,
    #[serde(default)]
    pub filter: String,
    #[serde(default)]
    pub description: Option<String>,
}

/// The Register API settings: which Person Data fields an App Api credential may set.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegisterSettings {
    #[serde(default)]
    pub fields: Vec<String>,
}

/// The data model of an instance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DataModel {
    #[serde(default = "default_date_format")]
    pub date_format: String,
    #[serde(default = "default_timestamp_format")]
    pub timestamp_format: String,
    /// The Person Data field that is the Recipient Id.
    pub recipient_id: String,
    pub person_data: Vec<PersonField>,
    #[serde(default)]
    pub one_to_many: Vec<TableDef>,
    #[serde(default)]
    pub global_data: Vec<GlobalDataDef>,
    #[serde(default)]
    pub global_data_tables: Vec<TableDef>,
    #[serde(default)]
    pub events: Vec<EventDef>,
    #[serde(default)]
    pub target_groups: Vec<NamedFilter>,
    #[serde(default)]
    pub promotions: Vec<NamedFilter>,
    #[serde(default)]
    pub register: RegisterSettings,
    /// Flows the operator ships with the instance (`[[model.flows]]`; see `model::flow`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flows: Vec<super::flow::Flow>,
}

fn default_date_format() -> String {
    "dd.MM.yyyy".into()
}

fn default_timestamp_format() -> String {
    "dd.MM.yyyy HH:mm:ss".into()
}

impl DataModel {
    pub fn person_field(&self, name: &str) -> Option<&PersonField> {
        self.person_data.iter().find(|f| f.name == name)
    }

    pub fn recipient_id_field(&self) -> &PersonField {
        self.person_field(&self.recipient_id).expect("validated: recipient id field exists")
    }

    /// The index of the Recipient Id among the Person Data fields.
    pub fn recipient_id_index(&self) -> usize {
        self.person_data.iter().position(|f| f.name == self.recipient_id).expect("validated: recipient id field exists")
    }

    pub fn one_to_many_table(&self, name: &str) -> Option<&TableDef> {
        self.one_to_many.iter().find(|t| t.name == name)
    }

    pub fn global_data_table(&self, name: &str) -> Option<&TableDef> {
        self.global_data_tables.iter().find(|t| t.name == name)
    }

    pub fn global_data_item(&self, name: &str) -> Option<&GlobalDataDef> {
        self.global_data.iter().find(|g| g.name == name)
    }
}

/// A whole definition file: the instances and the model they share.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DefinitionFile {
    #[serde(rename = "instance")]
    pub instances: Vec<InstanceSettings>,
    pub model: DataModel,
}

impl DefinitionFile {
    pub fn from_toml(text: &str) -> Result<DefinitionFile, String> {
        toml::from_str(text).map_err(|e| e.to_string())
    }
}

/// The definition of the demo instances, shipped in the repository.
pub const DEMO: &str = include_str!("../../instances/demo.toml");
