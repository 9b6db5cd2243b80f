//! Checks that our `proto/urlfrontier.proto` is wire-compatible with another copy of
//! the URLFrontier API (the published one):
//! `cargo run -p mgz-service --example proto_compat -- path/to/urlfrontier.proto`.
//!
//! Compares everything the wire and the generated stubs depend on: message names,
//! field names, numbers, types, labels and oneofs, enum values, and the RPCs with
//! their input/output types and streaming flags. Comments are ignored.

use std::collections::BTreeSet;
use std::path::Path;

use protox::prost_reflect::prost_types::FileDescriptorProto;

fn signature(file: &FileDescriptorProto) -> BTreeSet<String> {
    let mut lines = BTreeSet::new();
    lines.insert(format!("package {}", file.package()));
    for m in &file.message_type {
        message_lines(m, "", &mut lines);
    }
    for e in &file.enum_type {
        enum_lines(e, "", &mut lines);
    }
    for s in &file.service {
        for r in &s.method {
            lines.insert(format!(
                "rpc {}.{}({}{}) -> {}{}",
                s.name(),
                r.name(),
                if r.client_streaming() { "stream " } else { "" },
                r.input_type(),
                if r.server_streaming() { "stream " } else { "" },
                r.output_type()
            ));
        }
    }
    lines
}

fn message_lines(
    m: &protox::prost_reflect::prost_types::DescriptorProto,
    outer: &str,
    lines: &mut BTreeSet<String>,
) {
    let name = format!("{outer}{}", m.name());
    for f in &m.field {
        lines.insert(format!(
            "{name}.{} = {} {:?} {:?} {} oneof={:?} proto3_optional={}",
            f.name(),
            f.number(),
            f.label(),
            f.r#type(),
            f.type_name(),
            f.oneof_index
                .map(|i| m.oneof_decl[i as usize].name().to_owned()),
            f.proto3_optional()
        ));
    }
    for nested in &m.nested_type {
        message_lines(nested, &format!("{name}."), lines);
    }
    for e in &m.enum_type {
        enum_lines(e, &format!("{name}."), lines);
    }
}

fn enum_lines(
    e: &protox::prost_reflect::prost_types::EnumDescriptorProto,
    outer: &str,
    lines: &mut BTreeSet<String>,
) {
    for v in &e.value {
        lines.insert(format!(
            "enum {outer}{}.{} = {}",
            e.name(),
            v.name(),
            v.number()
        ));
    }
}

fn load(path: &Path) -> Result<FileDescriptorProto, Box<dyn std::error::Error>> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path.file_name().ok_or("no file name")?;
    let set = protox::compile([name], [dir])?;
    set.file
        .into_iter()
        .last()
        .ok_or_else(|| "empty descriptor set".into())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let theirs = std::env::args()
        .nth(1)
        .ok_or("usage: proto_compat PATH/urlfrontier.proto")?;
    let ours = Path::new(env!("CARGO_MANIFEST_DIR")).join("proto/urlfrontier.proto");
    let (a, b) = (
        signature(&load(&ours)?),
        signature(&load(Path::new(&theirs))?),
    );
    let only_ours: Vec<_> = a.difference(&b).collect();
    let only_theirs: Vec<_> = b.difference(&a).collect();
    for l in &only_ours {
        println!("only in ours:   {l}");
    }
    for l in &only_theirs {
        println!("only in theirs: {l}");
    }
    println!(
        "{} items compared, {} differences",
        a.len(),
        only_ours.len() + only_theirs.len()
    );
    if only_ours.is_empty() && only_theirs.is_empty() {
        Ok(())
    } else {
        Err("not compatible".into())
    }
}
