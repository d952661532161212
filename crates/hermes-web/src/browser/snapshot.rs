//! A page's accessibility tree as text, in the format the reference's
//! browser backend (agent-browser) prints: one `- role "name" [attrs]`
//! line per node, indented by depth, with `ref=eN` on the elements the
//! model can act on. The compact form keeps the lines with a ref or a value
//! and their ancestors.

use std::collections::HashMap;

use serde_json::Value;

/// Roles the model can act on: always given a ref.
const INTERACTIVE: [&str; 18] = [
    "button",
    "link",
    "textbox",
    "checkbox",
    "radio",
    "combobox",
    "listbox",
    "menuitem",
    "menuitemcheckbox",
    "menuitemradio",
    "option",
    "searchbox",
    "slider",
    "spinbutton",
    "switch",
    "tab",
    "treeitem",
    "Iframe",
];
/// Roles given a ref when they have a name.
const CONTENT: [&str; 10] = [
    "heading",
    "cell",
    "gridcell",
    "columnheader",
    "rowheader",
    "listitem",
    "article",
    "region",
    "main",
    "navigation",
];

/// What a ref stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The DOM node behind it.
    pub backend_node: i64,
    /// Its role.
    pub role: String,
    /// Its name.
    pub name: String,
}

/// A rendered snapshot.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    /// The text.
    pub text: String,
    /// `eN` → the element.
    pub refs: HashMap<String, Target>,
}

struct Node<'a> {
    raw: &'a Value,
    children: Vec<&'a str>,
}

/// A node's `role`/`name`/`value` as text.
fn text_of(node: &Value, key: &str) -> String {
    match &node[key]["value"] {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn clean_name(name: &str) -> String {
    name.chars()
        .filter(|c| !matches!(c, '\u{200b}' | '\u{200c}' | '\u{200d}' | '\u{feff}'))
        .map(|c| if c == '\u{a0}' { ' ' } else { c })
        .collect::<String>()
        .trim()
        .to_owned()
}

/// The node's properties as `[attrs]`, in agent-browser's order.
fn attrs(node: &Value) -> Vec<String> {
    let props: HashMap<&str, &Value> = node["properties"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| Some((p["name"].as_str()?, &p["value"]["value"])))
        .collect();
    let mut out = Vec::new();
    if let Some(level) = props.get("level").and_then(|v| v.as_i64()) {
        out.push(format!("level={level}"));
    }
    if let Some(checked) = props.get("checked") {
        let v = match checked {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        out.push(format!("checked={v}"));
    }
    if let Some(expanded) = props.get("expanded").and_then(|v| v.as_bool()) {
        out.push(format!("expanded={expanded}"));
    }
    for flag in ["selected", "disabled", "required"] {
        if props.get(flag).and_then(|v| v.as_bool()) == Some(true) {
            out.push(flag.to_owned());
        }
    }
    out
}

struct Renderer<'a> {
    nodes: HashMap<&'a str, Node<'a>>,
    lines: Vec<(usize, String, bool)>,
    /// Elements given a ref, in document order, before they are numbered.
    pending: Vec<Target>,
}

/// Marks a ref's place in a line until it is numbered.
const PLACEHOLDER: char = '\u{1}';

/// Ref ids as agent-browser gives them: the named content elements
/// (headings, cells …) first, then the interactive ones, each group in
/// document order.
fn number_refs(pending: &[Target]) -> Vec<String> {
    let mut ids = vec![String::new(); pending.len()];
    let mut next = 0;
    for interactive in [false, true] {
        for (i, target) in pending.iter().enumerate() {
            if INTERACTIVE.contains(&target.role.as_str()) == interactive {
                next += 1;
                ids[i] = format!("e{next}");
            }
        }
    }
    ids
}

/// `line` with its ref placeholder replaced by the ref's id.
fn numbered(line: &str, ids: &[String]) -> String {
    let mut parts = line.split(PLACEHOLDER);
    let (Some(head), Some(index), Some(tail)) = (parts.next(), parts.next(), parts.next()) else {
        return line.to_owned();
    };
    let id = index
        .parse::<usize>()
        .ok()
        .and_then(|i| ids.get(i))
        .map_or("", String::as_str);
    format!("{head}{id}{tail}")
}

impl<'a> Renderer<'a> {
    fn render(&mut self, id: &'a str, depth: usize) {
        let Some(node) = self.nodes.get(id) else {
            return;
        };
        let raw = node.raw;
        let children: Vec<&'a str> = node.children.clone();
        let role = text_of(raw, "role");
        let ignored = raw["ignored"].as_bool() == Some(true);
        // Ignored nodes and document roots show their children only.
        let pass_through = ignored
            || matches!(
                role.as_str(),
                "InlineTextBox" | "RootWebArea" | "WebArea" | "" | "none"
            );
        if pass_through {
            self.render_children(&children, depth, "");
            return;
        }
        let name = clean_name(&text_of(raw, "name"));
        if role == "StaticText" && name.is_empty() {
            return;
        }
        let wants_ref = INTERACTIVE.contains(&role.as_str())
            || (CONTENT.contains(&role.as_str()) && !name.is_empty());
        if role == "generic" && !wants_ref && children.len() <= 1 {
            self.render_children(&children, depth, &name);
            return;
        }
        let mut line = format!("{}- {role}", "  ".repeat(depth));
        if !name.is_empty() {
            line.push(' ');
            line.push_str(&serde_json::to_string(&name).unwrap_or_default());
        }
        let mut attributes = attrs(raw);
        if wants_ref {
            // Numbered once the walk is done (see `number_refs`).
            attributes.push(format!(
                "ref={PLACEHOLDER}{}{PLACEHOLDER}",
                self.pending.len()
            ));
            self.pending.push(Target {
                backend_node: raw["backendDOMNodeId"].as_i64().unwrap_or(0),
                role: role.clone(),
                name: name.clone(),
            });
        }
        if !attributes.is_empty() {
            line.push_str(&format!(" [{}]", attributes.join(", ")));
        }
        let value = clean_name(&text_of(raw, "value"));
        if !value.is_empty() && value != name {
            line.push_str(": ");
            line.push_str(&value);
        }
        let keep = wants_ref || line.contains(": ");
        self.lines.push((depth, line, keep));
        self.render_children(&children, depth + 1, &name);
    }

    /// Children in order, adjacent text joined, and a lone text child that
    /// only repeats its parent's name left out.
    fn render_children(&mut self, children: &[&'a str], depth: usize, parent_name: &str) {
        let texts: Vec<bool> = children
            .iter()
            .map(|c| {
                self.nodes
                    .get(c)
                    .is_some_and(|n| text_of(n.raw, "role") == "StaticText")
            })
            .collect();
        if children.len() == 1 && texts[0] {
            let name = self
                .nodes
                .get(children[0])
                .map(|n| clean_name(&text_of(n.raw, "name")))
                .unwrap_or_default();
            if name == parent_name {
                return;
            }
        }
        let mut i = 0;
        while i < children.len() {
            if texts[i] {
                let mut joined = String::new();
                while i < children.len() && texts[i] {
                    if let Some(n) = self.nodes.get(children[i]) {
                        joined.push_str(&text_of(n.raw, "name"));
                    }
                    i += 1;
                }
                let joined = clean_name(&joined);
                if !joined.is_empty() {
                    let line = format!(
                        "{}- StaticText {}",
                        "  ".repeat(depth),
                        serde_json::to_string(&joined).unwrap_or_default()
                    );
                    let keep = line.contains(": ");
                    self.lines.push((depth, line, keep));
                }
                continue;
            }
            self.render(children[i], depth);
            i += 1;
        }
    }
}

/// The tree `Accessibility.getFullAXTree` returned, rendered; `compact`
/// keeps the lines that matter for acting (and their ancestors).
pub fn render(tree: &Value, compact: bool) -> Snapshot {
    let list: &[Value] = tree["nodes"].as_array().map_or(&[], Vec::as_slice);
    let mut nodes: HashMap<&str, Node<'_>> = HashMap::new();
    for raw in list {
        let Some(id) = raw["nodeId"].as_str() else {
            continue;
        };
        let children = raw["childIds"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        nodes.insert(id, Node { raw, children });
    }
    let root = list
        .iter()
        .find(|n| n["parentId"].is_null())
        .and_then(|n| n["nodeId"].as_str());
    let mut renderer = Renderer {
        nodes,
        lines: Vec::new(),
        pending: Vec::new(),
    };
    if let Some(root) = root {
        renderer.render(root, 0);
    }
    let ids = number_refs(&renderer.pending);
    let refs: HashMap<String, Target> = ids.iter().cloned().zip(renderer.pending).collect();
    let lines: Vec<(usize, String, bool)> = renderer
        .lines
        .into_iter()
        .map(|(depth, line, keep)| (depth, numbered(&line, &ids), keep))
        .collect();
    let kept: Vec<&String> = if compact {
        // A line stays if it matters or has a descendant that does.
        let mut keep = vec![false; lines.len()];
        let mut ancestors: Vec<usize> = Vec::new();
        for (i, (depth, _, matters)) in lines.iter().enumerate() {
            while ancestors.last().is_some_and(|&a| lines[a].0 >= *depth) {
                ancestors.pop();
            }
            if *matters {
                keep[i] = true;
                for &a in &ancestors {
                    keep[a] = true;
                }
            }
            ancestors.push(i);
        }
        lines
            .iter()
            .zip(keep)
            .filter(|(_, k)| *k)
            .map(|((_, l, _), _)| l)
            .collect()
    } else {
        lines.iter().map(|(_, l, _)| l).collect()
    };
    let text = if kept.is_empty() {
        "(empty page)".to_owned()
    } else {
        kept.into_iter().cloned().collect::<Vec<_>>().join("\n")
    };
    Snapshot { text, refs }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn node(id: &str, parent: Option<&str>, role: &str, name: &str, children: &[&str]) -> Value {
        json!({"nodeId": id, "parentId": parent, "role": {"value": role}, "name": {"value": name},
               "childIds": children, "backendDOMNodeId": id.parse::<i64>().unwrap() + 100})
    }

    fn form() -> Value {
        let mut textbox = node("4", Some("3"), "textbox", "Name", &[]);
        textbox["properties"] = json!([{"name": "required", "value": {"value": true}}]);
        textbox["value"] = json!({"value": "Ada"});
        let mut heading = node("2", Some("1"), "heading", "Sign up", &["6"]);
        heading["properties"] = json!([{"name": "level", "value": {"value": 1}}]);
        json!({"nodes": [
            node("1", None, "RootWebArea", "Sign up", &["2", "7", "3"]),
            heading,
            node("6", Some("2"), "StaticText", "Sign up", &[]),
            node("7", Some("1"), "paragraph", "", &["8", "9"]),
            node("8", Some("7"), "StaticText", "Tell us ", &[]),
            node("9", Some("7"), "StaticText", "your name.", &[]),
            node("3", Some("1"), "form", "", &["4", "5"]),
            textbox,
            node("5", Some("3"), "button", "Send", &[]),
        ]})
    }

    #[test]
    fn the_full_tree_reads_like_agent_browsers() {
        let snap = render(&form(), false);
        assert_eq!(
            snap.text,
            "- heading \"Sign up\" [level=1, ref=e1]\n- paragraph\n  - StaticText \"Tell us your name.\"\n- form\n  - textbox \"Name\" [required, ref=e2]: Ada\n  - button \"Send\" [ref=e3]"
        );
        assert_eq!(snap.refs["e2"].backend_node, 104);
        assert_eq!(snap.refs["e3"].role, "button");
    }

    #[test]
    fn the_compact_tree_keeps_what_can_be_acted_on() {
        let snap = render(&form(), true);
        assert_eq!(
            snap.text,
            "- heading \"Sign up\" [level=1, ref=e1]\n- form\n  - textbox \"Name\" [required, ref=e2]: Ada\n  - button \"Send\" [ref=e3]"
        );
        assert_eq!(render(&json!({"nodes": []}), true).text, "(empty page)");
        // Named content first, then what can be acted on, as agent-browser numbers them.
        let page = json!({"nodes": [
            node("1", None, "RootWebArea", "", &["2", "3"]),
            node("2", Some("1"), "link", "Home", &[]),
            node("3", Some("1"), "heading", "Title", &[]),
        ]});
        assert_eq!(
            render(&page, true).text,
            "- link \"Home\" [ref=e2]\n- heading \"Title\" [ref=e1]"
        );
    }
}
