//! The guide's Rust examples are the files this suite runs, verbatim: each ```rust block of
//! docs/guides/rust.md is one of them; its install block installs from the clone's layout.

const EXAMPLES: [&str; 4] = [
    "tests/examples/checkout.rs",
    "tests/examples_checkout.rs",
    "tests/examples/provider.rs",
    "tests/examples_provider.rs",
];

fn blocks(guide: &str, language: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut block: Option<String> = None;
    for line in guide.lines() {
        match &mut block {
            None if line.trim_end() == format!("```{language}") => block = Some(String::new()),
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
    let blocks = blocks(&text, "rust");
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

#[test]
fn the_install_block_installs_the_stub_and_this_crate_from_the_clone() {
    let manifest = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let guide = std::fs::read_to_string(manifest.join("../../docs/guides/rust.md")).unwrap();
    let install = blocks(&guide, "sh").into_iter().find(|b| b.contains("cargo add")).expect("no install block");
    let clone = manifest.join("../..");
    let lines: Vec<&str> = install.lines().collect();
    assert_eq!(lines[0], "python3 -m venv .venv && .venv/bin/pip install /path/to/svc-stub");
    assert!(std::fs::read_to_string(clone.join("pyproject.toml")).unwrap().contains("name = \"svc-stub\""));
    assert_eq!(lines[1], "export SVC_STUB_BIN=$PWD/.venv/bin/svc-stub");
    let crate_path = lines[2].strip_prefix("cargo add --dev --path /path/to/svc-stub/").expect(lines[2]);
    assert_eq!(clone.join(crate_path).canonicalize().unwrap(), manifest.canonicalize().unwrap());
    // what the examples use besides is what this crate's own tests have
    let manifest_text = std::fs::read_to_string(manifest.join("Cargo.toml")).unwrap();
    let dev = manifest_text.split("[dev-dependencies]").nth(1).unwrap();
    assert!(lines[3].starts_with("cargo add --dev serde_json ureq@3 "), "{}", lines[3]);
    assert!(dev.contains("ureq = { version = \"3\"") && manifest_text.contains("serde_json = \"1\""));
}
