//! Collection filtering: the spec's RSQL grammar (pure parser) and its translation to
//! parameterised SQL on typed columns.

mod parse;
#[cfg(test)]
mod properties;
mod sql;

pub use parse::{parse, Comparison, Node, Op, ParseError, MAX_FILTER_LEN};
pub use sql::{compile, parse_filter_instant, Condition, Dialect, FilterError, Selectors};
