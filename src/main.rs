//! The `planner` binary: parses arguments and hands over to the library.

fn main() {
    std::process::exit(planner::main_with_exit_code());
}
