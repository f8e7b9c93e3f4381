//! The guide's Rust examples are the files this suite runs, verbatim: each ```rust block of
//! docs/guides/rust.md is one of them.

const EXAMPLES: [&str; 4] = [
    "tests/examples/checkout.rs",
    "tests/examples_checkout.rs",
    "tests/examples/provider.rs",
    "tests/examples_provider.rs",
];

fn rust_blocks(guide: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut block: Option<String> = None;
    for line in guide.lines() {
        match &mut block {
            None if line.trim_end() == "```rust" => block = Some(String::new()),
            Some(text) if line.trim_end() == "```" => {
                blocks.push(std::mem::take(text));
                block = None;
            }
            Some(text) => {
                text.push_str(line);
                text.push('\n');
            }
            None => {}
        }
    }
    blocks
}

#[test]
fn the_guides_rust_examples_are_the_files_the_suite_runs() {
    let manifest = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let guide = manifest.join("../../docs/guides/rust.md");
    let text = std::fs::read_to_string(&guide).unwrap();
    let blocks = rust_blocks(&text);
    assert_eq!(blocks.len(), EXAMPLES.len(), "{}: {} rust blocks, for {EXAMPLES:?}", guide.display(), blocks.len());
    for (block, example) in blocks.iter().zip(EXAMPLES) {
        let file = std::fs::read_to_string(manifest.join(example)).unwrap();
        assert!(
            block == &file,
            "{}: its block of {example} is not the file as it is; copy the file in",
            guide.display()
        );
    }
}
