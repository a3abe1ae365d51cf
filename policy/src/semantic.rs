//! Name resolution: which qualified name an expression refers to.
//!
//! Scopes follow Python's rules closely enough for a gate: module, class, function, lambda and
//! comprehension scopes; class scopes are skipped by nested functions; `global` redirects to the module.
//! Bindings are collected per scope before the scope is walked and are flow-insensitive: a name bound in
//! several places resolves to every value it may hold, so `f = print` followed by `f = os.system` still
//! resolves `f` to `os.system`. Unlike ruff, simple assignments (`s = os.system`) are followed.
//!
//! A binding does not hide a builtin unless it certainly holds at the use. In module and class scopes
//! (where CPython falls back to the builtins when a name is unbound) a name resolves to the builtin too
//! unless it is bound by a statement at the top level of that scope that ends before the use, and is
//! never unbound again: not `del`eted, not the name of an `except … as` (deleted when the handler
//! ends), and, at module level, not declared `global` by any nested scope (which may delete or rebind
//! it at any time). So `def exec(s): …` followed by `del exec` and `exec(code)` is the builtin `exec`.
//! Function scopes never fall back: a local that is unbound raises `UnboundLocalError`.
//!
//! This module owns no policy: it answers "what could this be?", never "is it allowed?".

use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};

use ruff_text_size::Ranged;

use crate::names;
use crate::parse::ast::visitor::{self, Visitor};
use crate::parse::ast::{self, Expr, Stmt};

/// Where a qualified name came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// Through an `import` or `from … import` of a module (the root is a module path).
    Import,
    /// A name that is not bound anywhere: a builtin (`builtins.<name>`).
    Builtin,
}

/// A resolved dotted name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QualName {
    pub path: String,
    pub origin: Origin,
}

impl QualName {
    pub fn segments(&self) -> Vec<&str> {
        self.path.split('.').collect()
    }

    pub(crate) fn child(&self, attr: &str) -> QualName {
        let mut path = String::with_capacity(self.path.len() + 1 + attr.len());
        path.push_str(&self.path);
        path.push('.');
        path.push_str(attr);
        QualName {
            path,
            origin: self.origin,
        }
    }
}

#[derive(Debug, Clone)]
enum Binding<'a> {
    /// The name refers to this dotted path (an import, or a from-import member).
    Path(String),
    /// The name holds the value of this expression, evaluated in this scope.
    Value(&'a Expr, ScopeId),
    /// The name is the target of a loop or comprehension over this iterable, evaluated in this scope:
    /// it holds each element in turn (followed only when the iterable is a literal collection).
    Element(&'a Expr, ScopeId),
    /// Something the resolver does not follow (a def, a parameter, a loop variable…).
    Opaque,
}

pub type ScopeId = usize;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScopeKind {
    Module,
    Class,
    Function,
}

#[derive(Debug)]
struct Scope<'a> {
    kind: ScopeKind,
    parent: Option<ScopeId>,
    bindings: HashMap<&'a str, Vec<Binding<'a>>>,
    globals: Vec<&'a str>,
    /// Names declared `nonlocal`: assigning them binds a name of an enclosing function, which the
    /// resolver does not follow.
    nonlocals: Vec<&'a str>,
    /// Names bound by a statement at the top level of this scope's own body (an import, an assignment,
    /// a `def` or a `class`, not in a block, not through `global` from another scope), and the byte
    /// offset where the first such statement ends: from there on the name is certainly bound, unless
    /// it is in `unbound_again`.
    definite: HashMap<&'a str, usize>,
    /// Names that may be unbound after a binding: targets of `del`, names of `except … as` handlers,
    /// and (module scope) names a nested scope declares `global`.
    unbound_again: HashSet<&'a str>,
}

/// All scopes seen so far and the resolver over them.
#[derive(Debug, Default)]
pub struct Semantic<'a> {
    scopes: Vec<Scope<'a>>,
}

/// Upper bound on alias hops and candidates, so hostile alias webs cannot blow up resolution.
const MAX_HOPS: usize = 8;
const MAX_CANDIDATES: usize = 16;

impl<'a> Semantic<'a> {
    /// Opens a scope under `parent` and collects the bindings of `body` (not of nested scopes).
    pub fn open(&mut self, kind: ScopeKind, parent: Option<ScopeId>, body: &'a [Stmt]) -> ScopeId {
        let id = self.scopes.len();
        let mut unbound_again = HashSet::new();
        if parent.is_none() {
            // A function or class anywhere in the module may `global x; del x` (or rebind `x`) whenever
            // it runs: at module level such a name is never certainly bound.
            let mut nested = NestedGlobals::default();
            for stmt in body {
                nested.visit_stmt(stmt);
            }
            unbound_again.extend(nested.names);
        }
        self.scopes.push(Scope {
            kind,
            parent,
            bindings: HashMap::new(),
            globals: Vec::new(),
            nonlocals: Vec::new(),
            definite: HashMap::new(),
            unbound_again,
        });
        let mut collector = Collector {
            semantic: self,
            scope: id,
            depth: 0,
            definite_end: None,
        };
        collector.body(body);
        id
    }

    /// Binds a name opaquely (parameters, comprehension targets).
    pub fn bind_opaque(&mut self, scope: ScopeId, name: &'a str) {
        self.bind(scope, name, Binding::Opaque);
    }

    /// Binds a comprehension target: a plain name holds the elements of `iterable`, evaluated in
    /// `iterable_scope`; names in a tuple target are opaque.
    pub fn bind_iteration(
        &mut self,
        scope: ScopeId,
        target: &'a Expr,
        iterable: &'a Expr,
        iterable_scope: ScopeId,
    ) {
        Collector {
            semantic: self,
            scope,
            depth: 0,
            definite_end: None,
        }
        .iteration(target, iterable, iterable_scope);
    }

    fn bind(&mut self, scope: ScopeId, name: &'a str, binding: Binding<'a>) {
        let scope = self.redirect(scope, name);
        if let Some(scope) = self.scopes.get_mut(scope) {
            scope.bindings.entry(name).or_default().push(binding);
        }
    }

    /// A `global` name binds in the module scope.
    fn redirect(&self, scope: ScopeId, name: &str) -> ScopeId {
        match self.scopes.get(scope) {
            Some(s) if s.globals.contains(&name) => 0,
            _ => scope,
        }
    }

    /// What `expr`, evaluated in `scope`, may refer to.
    pub fn resolve(&self, expr: &Expr, scope: ScopeId) -> Vec<QualName> {
        let mut out = Vec::new();
        self.resolve_into(expr, scope, 0, None, &mut out);
        out
    }

    /// What `expr` may refer to when it is evaluated at byte offset `at` of the program rather than
    /// where its own nodes are (an expression parsed out of a string literal at `at`).
    pub fn resolve_at(&self, expr: &Expr, scope: ScopeId, at: usize) -> Vec<QualName> {
        let mut out = Vec::new();
        self.resolve_into(expr, scope, 0, Some(at), &mut out);
        out
    }

    fn resolve_into(
        &self,
        expr: &Expr,
        scope: ScopeId,
        hops: usize,
        at: Option<usize>,
        out: &mut Vec<QualName>,
    ) {
        if hops > MAX_HOPS || out.len() >= MAX_CANDIDATES {
            return;
        }
        match expr {
            Expr::Name(name) => {
                let at = at.unwrap_or_else(|| name.range.start().to_usize());
                self.resolve_name(name.id.as_str(), scope, at, hops, out);
            }
            Expr::Attribute(attribute) => {
                let mut inner = Vec::new();
                self.resolve_into(&attribute.value, scope, hops, at, &mut inner);
                for base in inner {
                    push_unique(out, base.child(attribute.attr.id.as_str()));
                }
            }
            Expr::Named(named) => self.resolve_into(&named.value, scope, hops + 1, at, out),
            Expr::Call(call) => {
                // getattr(x, "name") is x.name.
                let mut callee = Vec::new();
                self.resolve_into(&call.func, scope, hops, at, &mut callee);
                if callee.iter().any(|q| q.path == "builtins.getattr") {
                    if let (Some(base), Some(Expr::StringLiteral(name))) =
                        (call.arguments.args.first(), call.arguments.args.get(1))
                    {
                        let mut inner = Vec::new();
                        self.resolve_into(base, scope, hops + 1, at, &mut inner);
                        for base in inner {
                            push_unique(out, base.child(name.value.to_str()));
                        }
                    }
                }
            }
            _ => {}
        }
    }

    fn resolve_name(
        &self,
        name: &str,
        scope: ScopeId,
        at: usize,
        hops: usize,
        out: &mut Vec<QualName>,
    ) {
        let Some((found, bindings)) = self.lookup(name, scope) else {
            push_builtin(out, name);
            return;
        };
        self.resolve_bindings(bindings, hops, out);
        if !self.certainly_bound(found, name, at) {
            match self.kind(found) {
                // Function locals never fall back (`UnboundLocalError`).
                Some(ScopeKind::Function) | None => {}
                Some(ScopeKind::Module) => push_if_builtin(out, name),
                // A class body looks the name up in the module's globals, then in the builtins.
                Some(ScopeKind::Class) => {
                    match self.scopes.first().and_then(|m| m.bindings.get(name)) {
                        None => push_if_builtin(out, name),
                        Some(module_bindings) => {
                            self.resolve_bindings(module_bindings, hops, out);
                            if !self.certainly_bound(0, name, at) {
                                push_if_builtin(out, name);
                            }
                        }
                    }
                }
            }
        }
    }

    fn resolve_bindings(&self, bindings: &[Binding<'a>], hops: usize, out: &mut Vec<QualName>) {
        for binding in bindings {
            match binding {
                Binding::Path(path) => push_unique(
                    out,
                    QualName {
                        path: path.clone(),
                        origin: Origin::Import,
                    },
                ),
                Binding::Value(value, value_scope) => {
                    self.resolve_into(value, *value_scope, hops + 1, None, out);
                }
                Binding::Element(iterable, value_scope) => {
                    for element in literal_elements(iterable) {
                        self.resolve_into(element, *value_scope, hops + 1, None, out);
                    }
                }
                Binding::Opaque => {}
            }
        }
    }

    /// True when `name`, bound in `scope`, certainly holds one of its bindings at byte offset `at`:
    /// a top-level statement of the scope bound it before `at`, and nothing may unbind it again.
    fn certainly_bound(&self, scope: ScopeId, name: &str, at: usize) -> bool {
        self.scopes.get(scope).is_some_and(|s| {
            !s.unbound_again.contains(name) && s.definite.get(name).is_some_and(|&end| end <= at)
        })
    }

    /// True when the name at the root of `expr` (a name or an attribute chain) is bound only by imports
    /// or not at all (a builtin): then [`Semantic::resolve`] knows every value it may have. A name also
    /// bound by a `def`, a class, a parameter or a loop may be something the resolver does not see.
    pub fn fully_resolved(&self, expr: &Expr, scope: ScopeId) -> bool {
        let mut root = expr;
        while let Expr::Attribute(attribute) = root {
            root = &attribute.value;
        }
        let Expr::Name(name) = root else {
            return false;
        };
        match self.lookup(name.id.as_str(), scope) {
            None => true,
            Some((_, bindings)) => bindings.iter().all(|b| matches!(b, Binding::Path(_))),
        }
    }

    /// What a bare name, evaluated in `scope` at byte offset `at`, may refer to (an `@name` of a pandas
    /// expression string).
    pub fn resolve_identifier(&self, name: &str, scope: ScopeId, at: usize) -> Vec<QualName> {
        let mut out = Vec::new();
        self.resolve_name(name, scope, at, 0, &mut out);
        out
    }

    fn lookup(&self, name: &str, scope: ScopeId) -> Option<(ScopeId, &Vec<Binding<'a>>)> {
        let mut current = Some(scope);
        let mut first = true;
        while let Some(id) = current {
            let s = self.scopes.get(id)?;
            if s.globals.contains(&name) {
                return self.scopes.first()?.bindings.get(name).map(|b| (0, b));
            }
            // Nested functions do not see class-level names.
            if first || s.kind != ScopeKind::Class {
                if let Some(bindings) = s.bindings.get(name) {
                    return Some((id, bindings));
                }
            }
            first = false;
            current = s.parent;
        }
        None
    }

    /// The string literals a name may hold, when every binding it has is a string literal, or the
    /// target of a loop over string literals: `for name in ["mean", "std"]`, or over a name bound only
    /// to a tuple of them (a tuple cannot be changed later; a list can, so a list must be written in the
    /// loop itself).
    pub fn literal_strings<'e>(&'e self, expr: &'e Expr, scope: ScopeId) -> Option<Vec<&'e str>> {
        match expr {
            Expr::StringLiteral(literal) => Some(vec![literal.value.to_str()]),
            Expr::Name(name) => {
                let (_, bindings) = self.lookup(name.id.as_str(), scope)?;
                let mut out = Vec::new();
                for binding in bindings {
                    match binding {
                        Binding::Value(Expr::StringLiteral(literal), _) => {
                            out.push(literal.value.to_str())
                        }
                        Binding::Element(iterable, iterable_scope) => {
                            out.extend(self.iterated_strings(iterable, *iterable_scope)?);
                        }
                        _ => return None,
                    }
                }
                (!out.is_empty()).then_some(out)
            }
            _ => None,
        }
    }

    /// The expressions a name was assigned, each with the scope it is evaluated in, when every binding
    /// the name has is an assignment; `None` for a name bound otherwise too (an import, a parameter, a
    /// loop target, a `def`) or not bound at all.
    pub fn bound_values(&self, name: &str, scope: ScopeId) -> Option<Vec<(&'a Expr, ScopeId)>> {
        let (_, bindings) = self.lookup(name, scope)?;
        bindings
            .iter()
            .map(|binding| match binding {
                Binding::Value(value, value_scope) => Some((*value, *value_scope)),
                _ => None,
            })
            .collect()
    }

    /// The strings a loop over `iterable` yields, when they are all literals.
    fn iterated_strings<'e>(&'e self, iterable: &'e Expr, scope: ScopeId) -> Option<Vec<&'e str>> {
        let elements: Vec<&Expr> = match iterable {
            Expr::List(_) | Expr::Tuple(_) | Expr::Set(_) => {
                literal_elements(iterable).iter().collect()
            }
            Expr::Name(name) => {
                let (_, bindings) = self.lookup(name.id.as_str(), scope)?;
                let mut elements = Vec::new();
                for binding in bindings {
                    match binding {
                        Binding::Value(tuple @ Expr::Tuple(_), _) => {
                            elements.extend(literal_elements(tuple))
                        }
                        _ => return None,
                    }
                }
                elements
            }
            _ => return None,
        };
        elements
            .iter()
            .map(|element| match element {
                Expr::StringLiteral(literal) => Some(literal.value.to_str()),
                _ => None,
            })
            .collect::<Option<Vec<_>>>()
            .filter(|strings| !strings.is_empty())
    }
}

/// The elements of a list, tuple or set display without starred items; nothing for other
/// expressions.
fn literal_elements(iterable: &Expr) -> &[Expr] {
    let elements = match iterable {
        Expr::List(list) => &list.elts,
        Expr::Tuple(tuple) => &tuple.elts,
        Expr::Set(set) => &set.elts,
        _ => return &[],
    };
    if elements.iter().any(|e| matches!(e, Expr::Starred(_))) {
        return &[];
    }
    elements
}

fn push_builtin(out: &mut Vec<QualName>, name: &str) {
    push_unique(
        out,
        QualName {
            path: ["builtins.", name].concat(),
            origin: Origin::Builtin,
        },
    );
}

/// The builtin `name` as a candidate, when there is one (an unbound name that is not a builtin raises
/// `NameError`).
fn push_if_builtin(out: &mut Vec<QualName>, name: &str) {
    if names::is_builtin(&names::normalize_identifier(name)) {
        push_builtin(out, name);
    }
}

/// The names declared `global` in the functions and classes of a module (at any depth).
#[derive(Default)]
struct NestedGlobals<'a> {
    names: Vec<&'a str>,
}

impl<'a> Visitor<'a> for NestedGlobals<'a> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        if let Stmt::Global(global) = stmt {
            self.names
                .extend(global.names.iter().map(|n| n.id.as_str()));
        }
        visitor::walk_stmt(self, stmt);
    }

    // Statements are never inside expressions.
    fn visit_expr(&mut self, _expr: &'a Expr) {}
}

pub(crate) fn push_unique(out: &mut Vec<QualName>, name: QualName) {
    if out.len() < MAX_CANDIDATES && !out.contains(&name) {
        out.push(name);
    }
}

/// Walks one scope's statements (not nested scopes) and records what each name is bound to.
struct Collector<'s, 'a> {
    semantic: &'s mut Semantic<'a>,
    scope: ScopeId,
    /// How many blocks (`if`, `for`, `try`…) deep the statement being collected is: 0 at the top level
    /// of the scope's body.
    depth: usize,
    /// Where the statement being collected ends, when the names it binds are certainly bound from there
    /// on (see [`Scope::definite`]).
    definite_end: Option<usize>,
}

impl<'a> Collector<'_, 'a> {
    fn bind(&mut self, name: &'a str, binding: Binding<'a>) {
        let target = self.semantic.redirect(self.scope, name);
        if let (Some(end), true) = (self.definite_end, target == self.scope) {
            if let Some(scope) = self.semantic.scopes.get_mut(target) {
                let first = scope.definite.entry(name).or_insert(end);
                *first = (*first).min(end);
            }
        }
        self.semantic.bind(self.scope, name, binding);
    }

    /// `del name` and the end of `except … as name`: the name may be unbound from here on.
    fn unbind(&mut self, name: &'a str) {
        let target = self.semantic.redirect(self.scope, name);
        if let Some(scope) = self.semantic.scopes.get_mut(target) {
            scope.unbound_again.insert(name);
        }
    }

    fn deleted(&mut self, target: &'a Expr) {
        match target {
            Expr::Name(name) => self.unbind(name.id.as_str()),
            Expr::Tuple(ast::ExprTuple { elts, .. }) | Expr::List(ast::ExprList { elts, .. }) => {
                for element in elts {
                    self.deleted(element);
                }
            }
            _ => {}
        }
    }

    fn body(&mut self, body: &'a [Stmt]) {
        // `global` applies to the whole scope, wherever it is written.
        for stmt in body {
            self.globals(stmt);
        }
        for stmt in body {
            self.stmt(stmt);
        }
    }

    /// A block nested in a statement: what it binds is bound only on some paths.
    fn block(&mut self, body: &'a [Stmt]) {
        self.depth += 1;
        self.body(body);
        self.depth -= 1;
    }

    fn globals(&mut self, stmt: &'a Stmt) {
        let Some(scope) = self.semantic.scopes.get_mut(self.scope) else {
            return;
        };
        match stmt {
            Stmt::Global(global) => scope
                .globals
                .extend(global.names.iter().map(|n| n.id.as_str())),
            Stmt::Nonlocal(nonlocal) => scope
                .nonlocals
                .extend(nonlocal.names.iter().map(|n| n.id.as_str())),
            _ => {}
        }
    }

    fn stmt(&mut self, stmt: &'a Stmt) {
        let definite = match stmt {
            Stmt::Import(_)
            | Stmt::ImportFrom(_)
            | Stmt::Assign(_)
            | Stmt::FunctionDef(_)
            | Stmt::ClassDef(_) => true,
            Stmt::AnnAssign(assign) => assign.value.is_some(),
            _ => false,
        };
        self.definite_end = (definite && self.depth == 0).then(|| stmt.range().end().to_usize());
        match stmt {
            Stmt::Delete(delete) => {
                for target in &delete.targets {
                    self.deleted(target);
                }
            }
            Stmt::Import(import) => {
                for alias in &import.names {
                    let full = alias.name.id.as_str();
                    match &alias.asname {
                        Some(asname) => {
                            self.bind(asname.id.as_str(), Binding::Path(full.to_owned()))
                        }
                        None => {
                            let root = full.split('.').next().unwrap_or(full);
                            let root_name = &alias.name.id.as_str()[..root.len()];
                            self.bind(root_name, Binding::Path(root.to_owned()));
                        }
                    }
                }
            }
            Stmt::ImportFrom(import) => {
                let module = import.module.as_ref().map_or("", |m| m.id.as_str());
                let prefix = ".".repeat(import.level as usize);
                for alias in &import.names {
                    if alias.name.id.as_str() == "*" {
                        continue;
                    }
                    let bound = alias.asname.as_ref().unwrap_or(&alias.name).id.as_str();
                    let path = if module.is_empty() {
                        format!("{prefix}{}", alias.name.id)
                    } else {
                        format!("{prefix}{module}.{}", alias.name.id)
                    };
                    self.bind(bound, Binding::Path(path));
                }
            }
            Stmt::Assign(assign) => {
                for target in &assign.targets {
                    self.target(target, Some(&assign.value));
                }
            }
            Stmt::AnnAssign(assign) => self.target(&assign.target, assign.value.as_deref()),
            Stmt::AugAssign(assign) => self.target(&assign.target, None),
            Stmt::FunctionDef(def) => self.bind(def.name.id.as_str(), Binding::Opaque),
            Stmt::ClassDef(def) => self.bind(def.name.id.as_str(), Binding::Opaque),
            Stmt::TypeAlias(alias) => self.target(&alias.name, None),
            Stmt::For(for_) => {
                self.iteration(&for_.target, &for_.iter, self.scope);
                self.block(&for_.body);
                self.block(&for_.orelse);
            }
            Stmt::While(while_) => {
                self.block(&while_.body);
                self.block(&while_.orelse);
            }
            Stmt::If(if_) => {
                self.block(&if_.body);
                for clause in &if_.elif_else_clauses {
                    self.block(&clause.body);
                }
            }
            Stmt::With(with) => {
                for item in &with.items {
                    if let Some(target) = &item.optional_vars {
                        self.target(target, None);
                    }
                }
                self.block(&with.body);
            }
            Stmt::Try(try_) => {
                self.block(&try_.body);
                for handler in &try_.handlers {
                    let ast::ExceptHandler::ExceptHandler(handler) = handler;
                    self.block(&handler.body);
                    if let Some(name) = &handler.name {
                        self.bind(name.id.as_str(), Binding::Opaque);
                        // CPython deletes the name when the handler ends.
                        self.unbind(name.id.as_str());
                    }
                }
                self.block(&try_.orelse);
                self.block(&try_.finalbody);
            }
            Stmt::Match(match_) => {
                for case in &match_.cases {
                    self.pattern(&case.pattern);
                    self.block(&case.body);
                }
            }
            _ => {}
        }
    }

    /// A loop target: a plain name holds each element of `iterable`; other targets are opaque.
    fn iteration(&mut self, target: &'a Expr, iterable: &'a Expr, iterable_scope: ScopeId) {
        match target {
            Expr::Name(name) => {
                self.bind(name.id.as_str(), Binding::Element(iterable, iterable_scope))
            }
            _ => self.target(target, None),
        }
    }

    fn target(&mut self, target: &'a Expr, value: Option<&'a Expr>) {
        match target {
            Expr::Name(name) => {
                let binding = match value {
                    Some(value) => Binding::Value(value, self.scope),
                    None => Binding::Opaque,
                };
                self.bind(name.id.as_str(), binding);
            }
            Expr::Tuple(tuple) => {
                let values = match value {
                    Some(Expr::Tuple(values)) if values.elts.len() == tuple.elts.len() => {
                        Some(&values.elts)
                    }
                    _ => None,
                };
                for (index, element) in tuple.elts.iter().enumerate() {
                    self.target(element, values.and_then(|v| v.get(index)));
                }
            }
            Expr::List(list) => {
                for element in &list.elts {
                    self.target(element, None);
                }
            }
            Expr::Starred(starred) => self.target(&starred.value, None),
            _ => {}
        }
    }

    fn pattern(&mut self, pattern: &'a ast::Pattern) {
        use ast::Pattern;
        match pattern {
            Pattern::MatchAs(p) => {
                if let Some(name) = &p.name {
                    self.bind(name.id.as_str(), Binding::Opaque);
                }
                if let Some(inner) = &p.pattern {
                    self.pattern(inner);
                }
            }
            Pattern::MatchStar(p) => {
                if let Some(name) = &p.name {
                    self.bind(name.id.as_str(), Binding::Opaque);
                }
            }
            Pattern::MatchMapping(p) => {
                for inner in &p.patterns {
                    self.pattern(inner);
                }
                if let Some(rest) = &p.rest {
                    self.bind(rest.id.as_str(), Binding::Opaque);
                }
            }
            Pattern::MatchSequence(p) => p.patterns.iter().for_each(|inner| self.pattern(inner)),
            Pattern::MatchOr(p) => p.patterns.iter().for_each(|inner| self.pattern(inner)),
            Pattern::MatchClass(p) => {
                p.arguments
                    .patterns
                    .iter()
                    .for_each(|inner| self.pattern(inner));
                p.arguments
                    .keywords
                    .iter()
                    .for_each(|keyword| self.pattern(&keyword.pattern));
            }
            Pattern::MatchValue(_) | Pattern::MatchSingleton(_) => {}
        }
    }
}

impl Semantic<'_> {
    /// The kind of a scope.
    pub fn kind(&self, scope: ScopeId) -> Option<ScopeKind> {
        self.scopes.get(scope).map(|s| s.kind)
    }

    /// True when assigning `name` in `scope` makes a variable the resolver follows to every use: a name
    /// of the module, or a local of a function (not declared `global` or `nonlocal` there, which bind a
    /// variable of another scope, written before or after this one is walked). A name assigned in a
    /// class body is an attribute of the class (`K.name`), which nothing follows.
    pub fn binds_locally(&self, scope: ScopeId, name: &str) -> bool {
        self.scopes.get(scope).is_some_and(|s| match s.kind {
            ScopeKind::Module => true,
            ScopeKind::Function => !s.globals.contains(&name) && !s.nonlocals.contains(&name),
            ScopeKind::Class => false,
        })
    }
}
