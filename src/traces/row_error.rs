//! What is wrong with one row of a trace.

/// What is wrong with one row, and at which column when known.
#[derive(Debug, Clone, PartialEq)]
pub struct RowError {
    pub column: Option<u64>,
    pub message: String,
}

impl From<String> for RowError {
    fn from(message: String) -> Self {
        RowError {
            column: None,
            message,
        }
    }
}
