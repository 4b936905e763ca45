//! Errors of every pipeline stage, and the exit codes the binary uses.

pub(crate) use super::located::Problem;
use std::fmt;
use std::path::PathBuf;

/// Exit code: success.
pub const EXIT_OK: i32 = 0;
/// Exit code: the input (scenario, profile, trace, arguments) is invalid.
pub const EXIT_BAD_INPUT: i32 = 2;
/// Exit code: the input is valid but no plan meets it (infeasible).
pub const EXIT_INFEASIBLE: i32 = 3;
/// Exit code: the solver or an I/O operation failed.
pub const EXIT_FAILURE: i32 = 4;
/// Exit code: `solve` found a plan, but its replay misses a tier's
/// attainment target (the report is written and opens with the miss;
/// `--accept-miss` turns this into 0).
pub const EXIT_TARGET_MISSED: i32 = 5;

/// Any error the planner reports.
#[derive(Debug)]
pub enum PlannerError {
    /// The scenario or a profile it names is invalid; every problem found is listed.
    Scenario(Vec<Problem>),
    /// A profile a command reads without a scenario (`perf`, `predict`,
    /// `calibrate`: its --gpu, --model or --engine) is invalid.
    Profile(Vec<Problem>),
    /// A plan file is invalid or does not match its scenario.
    Plan(Vec<Problem>),
    /// A per-request results log (for `goodput`) is invalid.
    Log(Vec<Problem>),
    /// A file of measured benchmark runs (for `calibrate --runs`) is invalid.
    Runs(Vec<Problem>),
    /// A trace file could not be read.
    Trace(Problem),
    /// An aggregate demand folder is invalid; every problem found is listed.
    Aggregate(Vec<Problem>),
    /// A rate-curve (shape) file could not be read.
    Shape(Problem),
    /// A reference data file (kernel timings) could not be read.
    Data(Problem),
    /// The scenario is valid but no plan meets it.
    Infeasible(String),
    /// The solver failed for a reason other than infeasibility.
    Solver(String),
    /// Reading or writing a file failed.
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A command-line argument is invalid.
    Usage(String),
    /// The plan's own replay misses a tier's target.
    TargetMissed(Vec<String>),
    /// `simulate`'s replay of a plan misses a tier's target.
    ReplayMissed(Vec<String>),
    /// A figure of the result came out infinite, NaN, or a negative cost or
    /// latency: an input lies at the edge of what the model can compute.
    Figure(crate::base::finite::BadFigure),
}

impl PlannerError {
    /// The process exit code for this error.
    pub fn exit_code(&self) -> i32 {
        match self {
            PlannerError::Scenario(_)
            | PlannerError::Profile(_)
            | PlannerError::Plan(_)
            | PlannerError::Log(_)
            | PlannerError::Runs(_)
            | PlannerError::Trace(_)
            | PlannerError::Aggregate(_)
            | PlannerError::Shape(_)
            | PlannerError::Data(_)
            | PlannerError::Usage(_)
            | PlannerError::Figure(_) => EXIT_BAD_INPUT,
            PlannerError::Infeasible(_) => EXIT_INFEASIBLE,
            PlannerError::Solver(_) | PlannerError::Io { .. } => EXIT_FAILURE,
            PlannerError::TargetMissed(_) | PlannerError::ReplayMissed(_) => EXIT_TARGET_MISSED,
        }
    }
}

impl fmt::Display for PlannerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlannerError::Scenario(problems) => list(f, "the scenario", problems),
            PlannerError::Profile(problems) => list(f, "the profile", problems),
            PlannerError::Plan(problems) => list(f, "the plan", problems),
            PlannerError::Log(problems) => list(f, "the request log", problems),
            PlannerError::Runs(problems) => list(f, "the file of measured runs", problems),
            PlannerError::Trace(e) => write!(f, "{e}"),
            PlannerError::Aggregate(problems) => list(f, "the aggregate", problems),
            PlannerError::Shape(p) => write!(f, "rate curve: {p}"),
            PlannerError::Data(p) => write!(f, "reference data: {p}"),
            PlannerError::Infeasible(msg) => write!(f, "no plan meets the scenario: {msg}"),
            PlannerError::Solver(msg) => write!(f, "the MILP solver failed: {msg}"),
            PlannerError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            PlannerError::Usage(msg) => write!(f, "{msg}"),
            PlannerError::Figure(bad) => write!(
                f,
                "the result's {bad}, so nothing was printed or written; an input it is computed from is too large or too small: bring the prices, rates, durations and limits it depends on into their documented ranges (docs/scenario-format.md)"
            ),
            PlannerError::TargetMissed(misses) => write!(
                f,
                "the plan's replay misses its target: {}. The report was written; loosen the tier's limits, allow more `simulation.max_rounds`, or pass --accept-miss to exit 0 with this plan",
                misses.join("; ")
            ),
            PlannerError::ReplayMissed(misses) => write!(
                f,
                "the replay misses the target: {}. The report was written; the plan does not keep its promise on these traces with this seed: solve again for them (or pass --accept-miss to exit 0)",
                misses.join("; ")
            ),
        }
    }
}

/// "`what` has N problem(s):", one line per problem, and what to do.
fn list(f: &mut fmt::Formatter<'_>, what: &str, problems: &[Problem]) -> fmt::Result {
    let n = problems.len();
    // A list cut by `located::listed` ends with a count of the rest.
    let cut = n == crate::base::located::MAX_LISTED + 1
        && problems[n - 1]
            .message
            .starts_with(crate::base::located::MORE_PROBLEMS);
    if cut {
        writeln!(
            f,
            "{what} has more than {} problems; the first {}:",
            n - 1,
            n - 1
        )?;
    } else {
        writeln!(
            f,
            "{what} has {n} problem{}:",
            if n == 1 { "" } else { "s" }
        )?;
    }
    for p in problems {
        writeln!(f, "  - {p}")?;
    }
    write!(
        f,
        "nothing was written; fix the problems above and run again"
    )
}

impl std::error::Error for PlannerError {}
