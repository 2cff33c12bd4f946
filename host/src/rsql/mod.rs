//! Collection filtering: the spec's RSQL grammar (pure parser) and its translation to
//! parameterised SQL on typed columns.

mod parse;
#[cfg(test)]
mod properties;
mod sql;

pub use parse::{parse, Comparison, Node, Op, ParseError, MAX_FILTER_LEN};
pub use sql::{compile, parse_filter_instant, Condition, Dialect, FilterError, Selectors};

use crate::values::Formats;

/// Parses and compiles a filter's text in one step: a malformed text is
/// `FilterError::Invalid` with the position where it broke.
pub fn compile_text(text: &str, selectors: &dyn Selectors, formats: &Formats, dialect: Dialect) -> Result<Condition, FilterError> {
    let node = parse(text).map_err(|e| FilterError::Invalid(e.to_string()))?;
    compile(&node, selectors, formats, dialect)
}
