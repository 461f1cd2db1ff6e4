fn main() {
    std::process::exit(toolshape::cli::main());
}
