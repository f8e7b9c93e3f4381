//! The crate's layout, as issue #47 asked it: a module tree without cycles (a guard lives with
//! what it borrows), and no process of the crate's own that a dropped value could leave running.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Each module of `src/` and the modules of the crate it names (`crate::name`).
fn edges() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut edges = BTreeMap::new();
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        let module = path.file_stem().unwrap().to_string_lossy().into_owned();
        if module == "lib" {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        // the crate's own tests, below `#[cfg(test)]`, may use anything
        let code = text.split("#[cfg(test)]\nmod tests").next().unwrap();
        let named = code
            .match_indices("crate::")
            .map(|(at, _)| code[at + 7..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect())
            .filter(|name: &String| name != &module && src.join(format!("{name}.rs")).is_file())
            .collect();
        edges.insert(module, named);
    }
    edges
}

#[test]
fn the_module_tree_has_no_cycle() {
    let edges = edges();
    assert!(edges["stub"].contains("client"), "the edges are read: {edges:?}");
    // depth-first, with the path so far: a module met again on its own path is a cycle
    fn visit(module: &str, edges: &BTreeMap<String, BTreeSet<String>>, path: &mut Vec<String>) {
        if let Some(at) = path.iter().position(|m| m == module) {
            panic!("a cycle: {} -> {module}", path[at..].join(" -> "));
        }
        path.push(module.to_owned());
        for next in &edges[module] {
            visit(next, edges, path);
        }
        path.pop();
    }
    for module in edges.keys() {
        visit(module, &edges, &mut Vec::new());
    }
    // a fault's guard borrows the stub, and lives with it
    assert!(!edges["faults"].contains("stub"), "{edges:?}");
}

#[test]
fn no_value_of_the_crate_holds_a_process() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        // `svc-stub shared` is run to its end (`.output()`); the stub it starts is its own
        for held in ["process::Child", "Child>", ": Child", ".spawn()"] {
            assert!(!text.contains(held), "{}: {held}", path.display());
        }
    }
}
