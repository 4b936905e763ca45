//! Arguments shared by several commands.

use crate::traces::TraceFormat;
use clap::ValueEnum;

/// Trace format names for the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum FormatArg {
    Auto,
    Azure,
    Mooncake,
    Burstgpt,
}

impl FormatArg {
    pub(super) fn to_format(self) -> Option<TraceFormat> {
        match self {
            FormatArg::Auto => None,
            FormatArg::Azure => Some(TraceFormat::Azure),
            FormatArg::Mooncake => Some(TraceFormat::Mooncake),
            FormatArg::Burstgpt => Some(TraceFormat::Burstgpt),
        }
    }
}
