//! Small reads of a parsed HTML document (html5ever's tree, as htmd
//! builds it): elements by tag or class, attributes, text.

use std::rc::Rc;

use markup5ever_rcdom::{Node, NodeData};

/// Parses `html` into a document tree.
pub fn parse(html: &str) -> Rc<Node> {
    // html5ever never fails on input; htmd's io::Result is for its API only.
    htmd::HtmlToMarkdown::new()
        .html_to_tree(html)
        .unwrap_or_else(|_| Node::new(NodeData::Document))
}

/// An element's tag name (lower case), or `""` for other nodes.
pub fn tag(node: &Node) -> &str {
    match &node.data {
        NodeData::Element { name, .. } => name.local.as_ref(),
        _ => "",
    }
}

/// An attribute's value.
pub fn attr(node: &Node, name: &str) -> Option<String> {
    match &node.data {
        NodeData::Element { attrs, .. } => attrs
            .borrow()
            .iter()
            .find(|a| a.name.local.as_ref() == name)
            .map(|a| a.value.to_string()),
        _ => None,
    }
}

/// Whether the element's `class` lists `class`.
pub fn has_class(node: &Node, class: &str) -> bool {
    attr(node, "class").is_some_and(|c| c.split_whitespace().any(|c| c == class))
}

/// Every element under `root` (itself included) that satisfies `want`, in
/// document order.
pub fn find_all(root: &Rc<Node>, want: &dyn Fn(&Node) -> bool) -> Vec<Rc<Node>> {
    let mut found = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(node) = stack.pop() {
        if want(&node) {
            found.push(node.clone());
        }
        let children = node.children.borrow();
        stack.extend(children.iter().rev().cloned());
    }
    found
}

/// The first element under `root` that satisfies `want`.
pub fn find(root: &Rc<Node>, want: &dyn Fn(&Node) -> bool) -> Option<Rc<Node>> {
    let mut stack = vec![root.clone()];
    while let Some(node) = stack.pop() {
        if want(&node) {
            return Some(node);
        }
        let children = node.children.borrow();
        stack.extend(children.iter().rev().cloned());
    }
    None
}

/// The text inside `node`, whitespace collapsed.
pub fn text(node: &Rc<Node>) -> String {
    let mut out = String::new();
    let mut stack = vec![node.clone()];
    while let Some(n) = stack.pop() {
        if let NodeData::Text { contents } = &n.data {
            out.push_str(&contents.borrow());
        }
        if matches!(tag(&n), "script" | "style") {
            continue;
        }
        let children = n.children.borrow();
        stack.extend(children.iter().rev().cloned());
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}
