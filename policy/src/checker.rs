//! The single walk over the AST and the one dispatch site that calls the rules.
//!
//! The checker owns traversal order, scopes, depth and node bounds, which rules judge what, and turning
//! rule verdicts into located findings. The rules themselves (under `rules/`) decide what is wrong.
//!
//! Two kinds of things are judged wherever they are met, and each goes through one function here:
//! qualified names ([`Checker::reference_rules`], for names used in code and names bound by imports
//! alike, the rules listed in [`REFERENCE_RULES`]) and attribute names ([`Checker::attribute_name`], for
//! attribute nodes, match class-pattern keywords, `getattr` literals, `attrgetter` paths and words in
//! strings). Where the context changes which rules apply, the context is a value
//! ([`ReferenceKind`], [`AttributeSite`]), not a second list of calls.

use std::cell::RefCell;
use std::rc::Rc;

use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};

use ruff_text_size::{Ranged, TextRange};

use crate::finding::{Finding, Span};
use crate::names;
use crate::parse::ast::visitor::{self, Visitor};
use crate::parse::ast::{self, Expr, Stmt};
use crate::rules::attributes::{
    computed_attribute, dunder_attribute, format_fields, private_attribute,
};
use crate::rules::dynamic::{dynamic_code, dynamic_import, reflection};
use crate::rules::imports::{import_not_allowed, reexported_module};
use crate::rules::references::banned_reference;
use crate::rules::strings::string_sink;
use crate::rules::{self, Rule};
use crate::semantic::{self, Origin, QualName, ScopeId, ScopeKind, Semantic};
use crate::settings::Policy;

#[cfg(test)]
mod tests;

/// What an f-string's interpolation stands for in the template its literal parts make: text only known
/// at run time (a private-use character, so a template's own text is not mistaken for it).
const RUN_TIME_TEXT: char = '\u{E000}';

/// An expression that may evaluate to a module the checker resolves: a name, an attribute chain or a
/// `getattr` call. Only these are judged as module values, so only these are marked as followed.
fn may_be_module(expr: &Expr) -> bool {
    matches!(expr, Expr::Name(_) | Expr::Attribute(_) | Expr::Call(_))
}

/// How a qualified name is met: the one thing that differs between the ways into the reference rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReferenceKind {
    /// Bound by `import a.b` or `from a import b` (the name `a.b`). Whether the statement may import it
    /// at all is judged by the import rules at the statement, before the reference rules.
    Import,
    /// Loaded in code as the callee of a call: `os.system(…)`.
    Call,
    /// Loaded in code other than as a callee: `f = os.system`, `map(eval, …)`, and the value of
    /// `getattr(x, "name")`.
    Value,
}

const EVERY_KIND: &[ReferenceKind] = &[
    ReferenceKind::Import,
    ReferenceKind::Call,
    ReferenceKind::Value,
];
const IN_CODE: &[ReferenceKind] = &[ReferenceKind::Call, ReferenceKind::Value];

/// A rule that judges qualified names, and the kinds of reference it judges.
pub(crate) struct ReferenceRule {
    /// The one rule `check` reports.
    pub(crate) rule: Rule,
    pub(crate) kinds: &'static [ReferenceKind],
    check: fn(&mut Checker<'_>, &QualName, TextRange),
}

/// Every rule that judges qualified names, in the order they run. Names used in code and names bound
/// by imports both go through this table ([`Checker::reference_rules`]); a rule added here judges both
/// unless its `kinds` say otherwise.
pub(crate) const REFERENCE_RULES: &[ReferenceRule] = &[
    ReferenceRule {
        rule: Rule::DunderAttribute,
        kinds: EVERY_KIND,
        check: dunder_attribute::check_reference,
    },
    // At an import the statement itself is judged by `import_not_allowed::check_module`/`check_member`.
    ReferenceRule {
        rule: Rule::ImportNotAllowed,
        kinds: IN_CODE,
        check: import_not_allowed::check_reference,
    },
    ReferenceRule {
        rule: Rule::ReexportedModule,
        kinds: EVERY_KIND,
        check: reexported_module::check_reference,
    },
    ReferenceRule {
        rule: Rule::PrivateAttribute,
        kinds: EVERY_KIND,
        check: private_attribute::check_reference,
    },
    ReferenceRule {
        rule: Rule::BannedReference,
        kinds: EVERY_KIND,
        check: banned_reference::check_reference,
    },
    ReferenceRule {
        rule: Rule::DynamicCode,
        kinds: EVERY_KIND,
        check: dynamic_code::check_reference,
    },
    ReferenceRule {
        rule: Rule::DynamicImport,
        kinds: EVERY_KIND,
        check: dynamic_import::check_reference,
    },
    ReferenceRule {
        rule: Rule::Reflection,
        kinds: EVERY_KIND,
        check: reflection::check_reference,
    },
    // `getattr` and friends only hide attribute names when passed around as values; their calls are
    // judged by `computed_attribute::check_call`, and importing one is not yet a use.
    ReferenceRule {
        rule: Rule::ComputedAttribute,
        kinds: &[ReferenceKind::Value],
        check: computed_attribute::check_value_use,
    },
    ReferenceRule {
        rule: Rule::StringSink,
        kinds: EVERY_KIND,
        check: string_sink::check_reference,
    },
];

/// Where an attribute name is met: the one thing that differs between the ways into the
/// attribute-name rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AttributeSite {
    /// An attribute node (`x.name`), a match class-pattern keyword (`case C(name=…)`) or an attribute
    /// of a `str.format` replacement field (`"{0.name}"`).
    Attribute,
    /// The literal name given to `getattr`, `setattr`, `hasattr` or `delattr`, or a segment of an
    /// `operator.attrgetter`/`methodcaller` path: `getattr(df, "to_pickle")` is `df.to_pickle`, so
    /// banned method names count as well. (At attribute nodes, banned methods are judged on the whole
    /// `x.name` expression by the attribute walk.)
    /// `module_receiver` as for [`AttributeSite::ModuleAttribute`].
    Getattr { module_receiver: bool },
    /// An attribute node whose receiver resolves to an imported name (`pd.io.stata.os`): the chain is
    /// judged as a reference too, so a module name in it is REX501's business there, not REX502's.
    ModuleAttribute,
    /// A word of a string literal that may walk attributes (`"a.__globals__"`): dunder and frame names
    /// only, since a column may well be named `os`.
    String,
    /// A string literal that is one identifier (`d["__builtins__"]`, `df["co_code"]`), or the key of a
    /// `str.format` field (`"{0[__globals__]}"`, `"{__builtins__}"` of `format_map`): dunder names
    /// only. A dunder key opens namespaces (`f.__globals__["__builtins__"]`); a frame attribute name
    /// on its own is a label, and where it is given to `getattr` and friends it is judged there.
    StringKey,
}

/// Maps byte offsets to 1-based lines and character columns.
#[derive(Debug)]
pub(crate) struct LineIndex<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Self { text, starts }
    }

    fn position(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let line = self.starts.partition_point(|&start| start <= offset).max(1);
        let start = self.starts[line - 1];
        let column = self
            .text
            .get(start..offset)
            .map_or(offset - start, |s| s.chars().count())
            + 1;
        (line, column)
    }

    pub(crate) fn span(&self, start: usize, end: usize) -> Span {
        let (line, column) = self.position(start);
        let (end_line, end_column) = self.position(end.max(start));
        Span {
            line,
            column,
            end_line,
            end_column,
            start_byte: start,
            end_byte: end,
        }
    }
}

/// What program nodes resolved to, by node address and scope ([`Checker::resolve`]).
type Resolved = HashMap<(usize, ScopeId), Rc<[QualName]>>;

pub(crate) struct Checker<'a> {
    pub(crate) policy: &'a Policy,
    pub(crate) semantic: Semantic<'a>,
    pub(crate) scope: ScopeId,
    text: &'a str,
    /// Made at the first finding: most programs have none.
    lines: std::cell::OnceCell<LineIndex<'a>>,
    /// Which of [`REFERENCE_RULES`] the policy leaves on, looked up once per program.
    reference_rules_on: [bool; REFERENCE_RULES.len()],
    findings: Vec<Finding>,
    seen: HashSet<(Rule, usize, usize)>,
    /// Import paths already reported as not allowed: uses of them are not reported again.
    pub(crate) denied_imports: HashSet<String>,
    /// The range of the callee of the call being visited, to tell calls from other references.
    call_func: Option<TextRange>,
    /// The arguments of that call.
    call_arguments: Option<&'a ast::Arguments>,
    /// Where a module value may appear without being a use of the value: positions the resolver
    /// follows (`o = os`, `for m in (os, sys)`, `getattr(os, "path")`) and tests (`np is None`).
    module_value_ok: HashSet<TextRange>,
    /// The attribute range of a dunder in a sanctioned call (`object.__setattr__(self, "x", v)`,
    /// `super().__new__(cls, v)`), which ATTR301 does not report.
    pub(crate) sanctioned_dunder: Option<TextRange>,
    depth: usize,
    nodes: usize,
    stopped: bool,
    /// What each expression of the program resolved to, by node and scope ([`Checker::resolve`]):
    /// an attribute chain is resolved at every link and a callee again for its call, and a name's
    /// value bindings are followed each time, so the walk asks the same questions many times.
    resolved: RefCell<Resolved>,
    /// Makes `'a` invariant: a `&Checker<'a>` cannot pass for a checker of a shorter-lived tree, so
    /// only nodes of the program itself reach [`Checker::resolve`] (whose answers are kept by address).
    program: std::marker::PhantomData<std::cell::Cell<&'a ()>>,
}

impl<'a> Checker<'a> {
    pub(crate) fn new(policy: &'a Policy, text: &'a str) -> Self {
        Self {
            policy,
            semantic: Semantic::default(),
            scope: 0,
            text,
            lines: std::cell::OnceCell::new(),
            reference_rules_on: std::array::from_fn(|index| {
                policy.action_for(REFERENCE_RULES[index].rule).is_some()
            }),
            findings: Vec::new(),
            seen: HashSet::new(),
            denied_imports: HashSet::new(),
            module_value_ok: HashSet::new(),
            call_func: None,
            call_arguments: None,
            sanctioned_dunder: None,
            depth: 0,
            nodes: 0,
            stopped: false,
            resolved: RefCell::new(HashMap::new()),
            program: std::marker::PhantomData,
        }
    }

    /// Walks a module and returns the findings in source order.
    pub(crate) fn run(mut self, module: &'a ast::ModModule) -> Vec<Finding> {
        self.scope = self.semantic.open(ScopeKind::Module, None, &module.body);
        self.visit_body(&module.body);
        self.finish()
    }

    fn finish(mut self) -> Vec<Finding> {
        self.findings.sort_by_key(|f| (f.span.start_byte, f.rule));
        rules::imports::shorten_repeated_hints(&mut self.findings);
        self.findings
    }

    /// Records a finding unless the policy turned the rule off or it was already reported here.
    pub(crate) fn report(
        &mut self,
        rule: Rule,
        range: TextRange,
        message: impl Into<String>,
        hint: impl Into<String>,
    ) {
        let (start, end) = (range.start().to_usize(), range.end().to_usize());
        let Some(action) = self.policy.action_for(rule) else {
            return;
        };
        if !self.seen.insert((rule, start, end)) {
            return;
        }
        self.findings.push(Finding {
            rule,
            name: rule.name(),
            severity: rule.severity(),
            action,
            message: message.into(),
            hint: hint.into(),
            span: self
                .lines
                .get_or_init(|| LineIndex::new(self.text))
                .span(start, end),
        });
    }

    pub(crate) fn in_class_scope(&self) -> bool {
        self.semantic.kind(self.scope) == Some(ScopeKind::Class)
    }

    /// What `expr`, a node of the program (borrowed for the whole walk, so its address names it
    /// until the walk ends), may refer to in the current scope; asked again, the answer is
    /// remembered. Resolution depends only on the node, the scope and bindings collected when the
    /// scope was opened, so a remembered answer is the answer.
    pub(crate) fn resolve(&self, expr: &'a Expr) -> Rc<[QualName]> {
        let key = (std::ptr::from_ref(expr) as usize, self.scope);
        if let Some(known) = self.resolved.borrow().get(&key) {
            return Rc::clone(known);
        }
        let answer: Rc<[QualName]> = match expr {
            // What `Semantic::resolve` answers, built on the remembered answer for the receiver
            // rather than resolving the whole chain again at every link.
            Expr::Attribute(attribute) => {
                let mut out = Vec::new();
                for base in self.resolve(&attribute.value).iter() {
                    semantic::push_unique(&mut out, base.child(attribute.attr.id.as_str()));
                }
                out.into()
            }
            // A call resolves to something only when it may be `getattr` (`getattr(x, "name")`).
            Expr::Call(call)
                if !self
                    .resolve(&call.func)
                    .iter()
                    .any(|name| name.path == "builtins.getattr") =>
            {
                Rc::from([])
            }
            _ => self.semantic.resolve(expr, self.scope).into(),
        };
        self.resolved.borrow_mut().insert(key, Rc::clone(&answer));
        answer
    }

    /// True when `expr` may be an imported module or a name reached through one.
    pub(crate) fn resolves_to_import(&self, expr: &'a Expr) -> bool {
        self.resolve(expr)
            .iter()
            .any(|name| name.origin == Origin::Import)
    }

    /// The string literals an expression may be, when it can only be literals.
    pub(crate) fn literal_strings(&self, expr: &Expr) -> Option<Vec<String>> {
        self.semantic
            .literal_strings(expr, self.scope)
            .map(|literals| literals.into_iter().map(str::to_owned).collect())
    }

    /// [`Checker::literal_strings`] with constant folding: a concatenation of such strings
    /// (`"@f" + "(1)"`) and a literal separator's `join` of a list or tuple of them
    /// (`"".join(["o", "pen"])`) are the strings they make. For the rules that judge what an
    /// evaluated string contains (STR601), so that what DYN405 lets through as fixed is judged.
    pub(crate) fn folded_strings(&self, expr: &Expr) -> Option<Vec<String>> {
        self.folded_strings_in(expr, 0)
    }

    /// [`Checker::folded_strings`] to a bounded depth and number of alternatives.
    fn folded_strings_in(&self, expr: &Expr, depth: usize) -> Option<Vec<String>> {
        const MAX_DEPTH: usize = 16;
        const MAX_ALTERNATIVES: usize = 16;
        if depth > MAX_DEPTH {
            return None;
        }
        if let Some(literals) = self.semantic.literal_strings(expr, self.scope) {
            return Some(literals.into_iter().map(str::to_owned).collect());
        }
        match expr {
            Expr::BinOp(binop) if binop.op == ast::Operator::Add => {
                let left = self.folded_strings_in(&binop.left, depth + 1)?;
                let right = self.folded_strings_in(&binop.right, depth + 1)?;
                if left.len() * right.len() > MAX_ALTERNATIVES {
                    return None;
                }
                Some(
                    left.iter()
                        .flat_map(|l| right.iter().map(move |r| format!("{l}{r}")))
                        .collect(),
                )
            }
            Expr::Call(call)
                if call.arguments.args.len() == 1 && call.arguments.keywords.is_empty() =>
            {
                let Expr::Attribute(attribute) = call.func.as_ref() else {
                    return None;
                };
                let Expr::StringLiteral(separator) = attribute.value.as_ref() else {
                    return None;
                };
                if attribute.attr.id.as_str() != "join" {
                    return None;
                }
                let elements = match &call.arguments.args[0] {
                    Expr::List(list) => &list.elts,
                    Expr::Tuple(tuple) => &tuple.elts,
                    _ => return None,
                };
                let mut parts = Vec::with_capacity(elements.len());
                for element in elements {
                    match self.folded_strings_in(element, depth + 1)?.as_slice() {
                        [one] => parts.push(one.clone()),
                        _ => return None,
                    }
                }
                Some(vec![parts.join(separator.value.to_str())])
            }
            _ => None,
        }
    }

    /// Judges one qualified name with every reference rule that applies to its kind: the only place
    /// the reference rules are called from.
    pub(crate) fn reference_rules(
        &mut self,
        name: &QualName,
        range: TextRange,
        kind: ReferenceKind,
    ) {
        self.run_reference_rules(name, range, kind);
        self.banned_alias(name, range, kind);
    }

    fn run_reference_rules(&mut self, name: &QualName, range: TextRange, kind: ReferenceKind) {
        for (entry, on) in REFERENCE_RULES.iter().zip(self.reference_rules_on) {
            // A rule the policy turned off would report nothing; skip its work.
            if on && entry.kinds.contains(&kind) {
                (entry.check)(self, name, range);
            }
        }
    }

    /// A second path to a banned object (the policy's identity index, `warden runtime check`):
    /// `seaborn.utils.urlopen` is judged as `urllib.request.urlopen`, and each finding says which
    /// banned object the path is.
    fn banned_alias(&mut self, name: &QualName, range: TextRange, kind: ReferenceKind) {
        let Some((alias, banned)) = self.policy.aliases.resolve(&name.path) else {
            return;
        };
        let alias = alias.to_owned();
        let before = self.findings.len();
        let target = QualName {
            path: banned,
            origin: Origin::Import,
        };
        // At an import statement the import rules judge the statement, not the name: what the name
        // is, is judged here as a use in code would be.
        let kind = if kind == ReferenceKind::Import {
            ReferenceKind::Value
        } else {
            kind
        };
        self.run_reference_rules(&target, range, kind);
        for finding in &mut self.findings[before..] {
            finding.message = format!(
                "`{alias}` is `{}` (the same object, found by `warden runtime check`): {}",
                target.path, finding.message
            );
        }
    }

    /// Judges every candidate a reference in code may resolve to.
    fn references(&mut self, candidates: &[QualName], range: TextRange, kind: ReferenceKind) {
        for name in candidates {
            self.reference_rules(name, range, kind);
        }
    }

    /// The arguments of the call whose callee is exactly `range`, when the reference being judged is
    /// that callee (`vars(x)`).
    pub(crate) fn arguments_of_callee(&self, range: TextRange) -> Option<&'a ast::Arguments> {
        (self.call_func == Some(range))
            .then_some(self.call_arguments)
            .flatten()
    }

    /// The kind of a load of `range` in code.
    fn use_kind(&self, range: TextRange) -> ReferenceKind {
        if self.call_func == Some(range) {
            ReferenceKind::Call
        } else {
            ReferenceKind::Value
        }
    }

    /// Judges an attribute name (NFKC-normalised first, as CPython does with identifiers) with the
    /// attribute-name rules that apply where it was met: the only place they are called from.
    pub(crate) fn attribute_name(&mut self, name: &str, range: TextRange, site: AttributeSite) {
        let normalized = names::normalize_identifier(name);
        dunder_attribute::check_attribute(self, &normalized, range);
        if site != AttributeSite::StringKey {
            rules::attributes::frame_attribute::check(self, &normalized, range);
        }
        match site {
            AttributeSite::String | AttributeSite::StringKey => {}
            AttributeSite::ModuleAttribute => {
                reexported_module::check_attribute_name(self, &normalized, range, true);
            }
            AttributeSite::Attribute => {
                reexported_module::check_attribute_name(self, &normalized, range, false);
            }
            AttributeSite::Getattr { module_receiver } => {
                reexported_module::check_attribute_name(self, &normalized, range, module_receiver);
            }
        }
        if matches!(site, AttributeSite::Getattr { .. }) {
            rules::references::banned_method::report_if_banned(self, name, range);
        }
    }

    /// A string literal: the words that may be attribute names (see
    /// `rules::attributes::string_words`), and what it walks as a `str.format` template.
    fn string(&mut self, text: &str, range: TextRange) {
        let words = rules::attributes::string_words(text);
        let site = if words.len() == 1 && words[0] == text {
            AttributeSite::StringKey
        } else {
            AttributeSite::String
        };
        for word in words {
            self.attribute_name(word, range, site);
        }
        if text.contains('{') {
            let steps = format_fields::steps(text);
            self.format_steps(&steps, range);
        }
    }

    /// The steps of `str.format` replacement fields (`"{0.__class__.__mro__}"`, `format_map`,
    /// `Formatter().vformat`, `Formatter().get_field`): attribute names are judged as attribute nodes
    /// are; index keys and keyword names as string keys. A name that holds [`RUN_TIME_TEXT`] was
    /// built at run time (an f-string's interpolation inside the template's field name).
    fn format_steps(&mut self, steps: &[format_fields::Step<'_>], range: TextRange) {
        for step in steps {
            match *step {
                format_fields::Step::Attribute(name) if name.contains(RUN_TIME_TEXT) => {
                    computed_attribute::report_format_field(self, range);
                }
                format_fields::Step::Attribute(name) => {
                    self.attribute_name(name, range, AttributeSite::Attribute);
                }
                format_fields::Step::Argument(key) | format_fields::Step::Index(key) => {
                    if !key.is_empty()
                        && !key.contains(RUN_TIME_TEXT)
                        && !key.bytes().all(|b| b.is_ascii_digit())
                    {
                        self.attribute_name(key, range, AttributeSite::StringKey);
                    }
                }
            }
        }
    }

    /// An f-string is a `str.format` template too when its text holds braces (`f"{{0.__mro__}}"`): its
    /// literal parts are joined as they are at run time, each interpolation standing for text the
    /// checker cannot see ([`RUN_TIME_TEXT`]), so a field split across parts (`f"{{0.__glo" "bals__}}"`)
    /// is read whole.
    fn fstring_template(&mut self, fstring: &ast::ExprFString) {
        let mut template = String::new();
        for part in fstring.value.iter() {
            match part {
                ast::FStringPart::Literal(literal) => {
                    self.string(&literal.value, literal.range);
                    template.push_str(&literal.value);
                }
                ast::FStringPart::FString(f) => {
                    for element in f.elements.iter() {
                        match element {
                            ast::InterpolatedStringElement::Literal(literal) => {
                                self.string(&literal.value, literal.range);
                                template.push_str(&literal.value);
                            }
                            ast::InterpolatedStringElement::Interpolation(_) => {
                                template.push(RUN_TIME_TEXT);
                            }
                        }
                    }
                }
            }
        }
        if template.contains('{') {
            let steps = format_fields::steps(&template);
            self.format_steps(&steps, fstring.range);
        }
    }

    /// `import a.b.c [as d]`: the module must be allowed, and `a.b.c` is judged as a reference.
    fn import(&mut self, import: &ast::StmtImport) {
        for alias in &import.names {
            let path = alias.name.id.as_str();
            import_not_allowed::check_module(self, path, alias.range());
            let name = QualName {
                path: path.to_owned(),
                origin: Origin::Import,
            };
            self.reference_rules(&name, alias.range(), ReferenceKind::Import);
        }
    }

    /// `from m import a [as b]`: `m.a` must be allowed and is judged as a reference; `from . import a`
    /// and `from m import *` bind names the checker cannot resolve.
    fn import_from(&mut self, import: &ast::StmtImportFrom) {
        if import.level > 0 {
            rules::imports::relative_import::report(self, import);
            return;
        }
        let Some(module) = &import.module else { return };
        let module = module.id.as_str();
        for alias in &import.names {
            let member = alias.name.id.as_str();
            if member == "*" {
                rules::imports::star_import::report(self, module, alias.range());
                import_not_allowed::check_module(self, module, alias.range());
                continue;
            }
            import_not_allowed::check_member(self, module, member, alias.range());
            let name = QualName {
                path: format!("{module}.{member}"),
                origin: Origin::Import,
            };
            self.reference_rules(&name, alias.range(), ReferenceKind::Import);
        }
    }

    /// Checks the names of an attribute chain and the chain as a reference; then walks its base.
    fn attribute_chain(&mut self, expr: &'a Expr) {
        if let Expr::Attribute(outer) = expr {
            dunder_attribute::check_store(self, outer);
        }
        let mut current = expr;
        while let Expr::Attribute(attribute) = current {
            let site = if self.resolves_to_import(&attribute.value) {
                AttributeSite::ModuleAttribute
            } else {
                AttributeSite::Attribute
            };
            self.attribute_name(attribute.attr.id.as_str(), attribute.attr.range, site);
            rules::references::banned_method::check(self, attribute);
            current = &attribute.value;
        }
        let kind = self.use_kind(expr.range());
        let candidates = self.resolve(expr);
        self.references(&candidates, expr.range(), kind);
        self.module_value(&candidates, expr.range(), kind);
        match current {
            Expr::Name(name) => dunder_attribute::check_name(self, name),
            base => self.visit_expr(base),
        }
    }

    fn call(&mut self, expr: &'a Expr, call: &'a ast::ExprCall) {
        let previous = self.call_func.replace(call.func.range());
        let previous_arguments = self.call_arguments.replace(&call.arguments);
        let previous_sanctioned = self.sanctioned_dunder;
        self.sanctioned_dunder = dunder_attribute::sanctioned_call(self, call);
        self.visit_expr(&call.func);
        self.sanctioned_dunder = previous_sanctioned;
        self.call_func = previous;
        self.call_arguments = previous_arguments;
        let callee = self.resolve(&call.func);
        if callee.iter().any(|q| q.path == "builtins.getattr") {
            // `getattr(pd.io.stata, "os")` is the reference `pandas.io.stata.os`.
            let candidates = self.resolve(expr);
            self.references(&candidates, expr.range(), ReferenceKind::Value);
            self.module_value(&candidates, expr.range(), self.use_kind(expr.range()));
        }
        let getattr = callee.iter().any(|q| q.path == "builtins.getattr");
        if getattr || callee.iter().any(|q| q.path == "builtins.hasattr") {
            self.getattr_with_literal_names(call, getattr);
        }
        computed_attribute::check_call(self, call, &callee);
        self.get_field_call(call);
        import_not_allowed::check_call(self, call, &callee);
        rules::dynamic::class_hook::check_call(self, call, &callee);
        banned_reference::check_call(self, call, &callee);
        string_sink::check_call(self, call);
        rules::dynamic::computed_code_string::check_call(self, call, &callee);
        rules::files::check_call(self, call, &callee);
        self.visit_arguments(&call.arguments);
    }

    /// A module allowed only in part, used as a value outside the positions the resolver follows.
    fn module_value(&mut self, candidates: &[QualName], range: TextRange, kind: ReferenceKind) {
        if kind == ReferenceKind::Value
            && !self.module_value_ok.contains(&range)
            && self.policy.action_for(Rule::ImportNotAllowed).is_some()
        {
            import_not_allowed::check_module_value(self, candidates, range);
        }
    }

    /// `getattr(os, "path")` and `getattr(np, name)` with `name` bound only to string literals (`for name
    /// in ["amin", "amax"]`): the references `os.path`, `numpy.amin`, `numpy.amax`, judged as such when
    /// `getattr` returns them (`references`; the resolver follows only a literal written in the call),
    /// and the receiver is no module value (nor is `hasattr`'s).
    fn getattr_with_literal_names(&mut self, call: &'a ast::ExprCall, references: bool) {
        let [receiver, name, ..] = &call.arguments.args[..] else {
            return;
        };
        if receiver.is_starred_expr() {
            return;
        }
        let Some(literals) = self.literal_strings(name) else {
            return;
        };
        self.module_value_ok.insert(receiver.range());
        if !references || name.is_string_literal_expr() {
            return;
        }
        for base in self.resolve(receiver).iter() {
            for literal in &literals {
                let reference = QualName {
                    path: format!("{}.{literal}", base.path),
                    origin: base.origin,
                };
                self.reference_rules(&reference, name.range(), ReferenceKind::Value);
            }
        }
    }

    /// The values of a statement the resolver follows to every use, marked before the statement is
    /// walked: the value assigned to local or module names (`o = os`, `a, b = os, sys`), the literal
    /// elements a `for` loop over them binds (`for m in (os, sys)`), and the tests of `if`, `while`
    /// and `assert`.
    fn followed_positions(&mut self, stmt: &'a Stmt) {
        match stmt {
            Stmt::Assign(assign) => {
                let mut followed: Option<Vec<TextRange>> = None;
                for target in &assign.targets {
                    let mut ranges = Vec::new();
                    self.followed_assignment(target, &assign.value, &mut ranges);
                    followed = Some(match followed {
                        None => ranges,
                        Some(previous) => previous
                            .into_iter()
                            .filter(|r| ranges.contains(r))
                            .collect(),
                    });
                }
                self.module_value_ok.extend(followed.unwrap_or_default());
            }
            Stmt::AnnAssign(assign) => {
                if let Some(value) = &assign.value {
                    let mut ranges = Vec::new();
                    self.followed_assignment(&assign.target, value, &mut ranges);
                    self.module_value_ok.extend(ranges);
                }
            }
            Stmt::For(for_) => {
                if let Expr::Name(target) = for_.target.as_ref() {
                    if self.semantic.binds_locally(self.scope, target.id.as_str()) {
                        self.followed_elements(&for_.iter);
                    }
                }
            }
            Stmt::If(if_) => {
                self.inert_test(&if_.test);
                for clause in &if_.elif_else_clauses {
                    if let Some(test) = &clause.test {
                        self.inert_test(test);
                    }
                }
            }
            Stmt::While(while_) => self.inert_test(&while_.test),
            Stmt::Assert(assert) => self.inert_test(&assert.test),
            // An expression statement's value is dropped (`pandas.io` alone on a line).
            Stmt::Expr(statement) if may_be_module(&statement.value) => {
                self.module_value_ok.insert(statement.value.range());
            }
            _ => {}
        }
    }

    /// The parts of `value` that an assignment to `target` binds to names the resolver follows (as
    /// `semantic`'s collector binds them: a name, or a tuple of names given a tuple of the same length).
    fn followed_assignment(&self, target: &Expr, value: &Expr, out: &mut Vec<TextRange>) {
        match (target, value) {
            (Expr::Name(name), _)
                if may_be_module(value)
                    && self.semantic.binds_locally(self.scope, name.id.as_str()) =>
            {
                out.push(value.range());
            }
            (Expr::Tuple(targets), Expr::Tuple(values))
                if targets.elts.len() == values.elts.len() =>
            {
                for (target, value) in targets.elts.iter().zip(&values.elts) {
                    self.followed_assignment(target, value, out);
                }
            }
            _ => {}
        }
    }

    /// The elements of a literal list, tuple or set that a loop binds in turn (no starred element).
    fn followed_elements(&mut self, iterable: &Expr) {
        let elements = match iterable {
            Expr::List(list) => &list.elts,
            Expr::Tuple(tuple) => &tuple.elts,
            Expr::Set(set) => &set.elts,
            _ => return,
        };
        if elements.iter().any(Expr::is_starred_expr) {
            return;
        }
        self.module_value_ok.extend(
            elements
                .iter()
                .filter(|element| may_be_module(element))
                .map(Ranged::range),
        );
    }

    /// A condition only tested for truth (`if np:`, `while m and n:`, `not np`): its operands, and
    /// those of `and`/`or`/`not` in it, are not values handed on.
    fn inert_test(&mut self, test: &Expr) {
        match test {
            Expr::BoolOp(boolean) => {
                for value in &boolean.values {
                    self.inert_test(value);
                }
            }
            Expr::UnaryOp(unary) if unary.op == ast::UnaryOp::Not => {
                self.inert_test(&unary.operand)
            }
            other => {
                if may_be_module(other) {
                    self.module_value_ok.insert(other.range());
                }
            }
        }
    }

    /// `Formatter().get_field("0.__init__.__globals__", args, kwargs)` walks a field name with no braces
    /// around it (whatever the receiver: the checker does not know types, and the name is distinctive).
    fn get_field_call(&mut self, call: &ast::ExprCall) {
        let ast::Expr::Attribute(callee) = call.func.as_ref() else {
            return;
        };
        if callee.attr.id.as_str() != "get_field" {
            return;
        }
        let Some(field_name) = call.arguments.args.first() else {
            return;
        };
        for literal in self.literal_strings(field_name).unwrap_or_default() {
            let steps = format_fields::field_name_steps(&literal);
            self.format_steps(&steps, field_name.range());
        }
    }

    fn function(&mut self, def: &'a ast::StmtFunctionDef) {
        for decorator in &def.decorator_list {
            self.visit_decorator(decorator);
        }
        if let Some(type_params) = &def.type_params {
            self.visit_type_params(type_params);
        }
        self.visit_parameters(&def.parameters);
        if let Some(returns) = &def.returns {
            self.visit_annotation(returns);
        }
        if self.in_class_scope() {
            dunder_attribute::check_definition(self, &def.name);
            rules::dynamic::class_hook::check_definition(self, &def.name);
        }
        let outer = self.scope;
        self.scope = self
            .semantic
            .open(ScopeKind::Function, Some(outer), &def.body);
        for parameter in def.parameters.iter() {
            self.semantic
                .bind_opaque(self.scope, parameter.name().id.as_str());
        }
        self.visit_body(&def.body);
        self.scope = outer;
    }

    fn class(&mut self, def: &'a ast::StmtClassDef) {
        for decorator in &def.decorator_list {
            self.visit_decorator(decorator);
        }
        if let Some(type_params) = &def.type_params {
            self.visit_type_params(type_params);
        }
        if let Some(arguments) = &def.arguments {
            rules::dynamic::class_hook::check_class_keywords(self, arguments);
            self.visit_arguments(arguments);
        }
        let outer = self.scope;
        self.scope = self.semantic.open(ScopeKind::Class, Some(outer), &def.body);
        self.visit_body(&def.body);
        self.scope = outer;
    }

    fn lambda(&mut self, lambda: &'a ast::ExprLambda) {
        if let Some(parameters) = &lambda.parameters {
            self.visit_parameters(parameters);
        }
        let outer = self.scope;
        self.scope = self.semantic.open(ScopeKind::Function, Some(outer), &[]);
        if let Some(parameters) = &lambda.parameters {
            for parameter in parameters.iter() {
                self.semantic
                    .bind_opaque(self.scope, parameter.name().id.as_str());
            }
        }
        self.visit_expr(&lambda.body);
        self.scope = outer;
    }

    fn comprehension(&mut self, generators: &'a [ast::Comprehension], parts: &[&'a Expr]) {
        for generator in generators {
            // The comprehension's own scope binds the target: a local the resolver follows.
            if generator.target.is_name_expr() {
                self.followed_elements(&generator.iter);
            }
            for condition in &generator.ifs {
                self.inert_test(condition);
            }
        }
        let outer = self.scope;
        self.scope = self.semantic.open(ScopeKind::Function, Some(outer), &[]);
        for (index, generator) in generators.iter().enumerate() {
            // The first iterable is evaluated in the enclosing scope, the others in the comprehension's.
            let iterable_scope = if index == 0 { outer } else { self.scope };
            self.semantic.bind_iteration(
                self.scope,
                &generator.target,
                &generator.iter,
                iterable_scope,
            );
        }
        for generator in generators {
            self.visit_comprehension(generator);
        }
        for part in parts {
            self.visit_expr(part);
        }
        self.scope = outer;
    }

    /// Counts a node and tracks depth; false when the walk must not descend.
    fn enter(&mut self, range: TextRange) -> bool {
        if self.stopped {
            return false;
        }
        self.nodes += 1;
        if self.nodes > self.policy.source.max_nodes {
            self.stopped = true;
            let limit = self.policy.source.max_nodes;
            self.report(
                Rule::SourceLimits,
                range,
                format!("program has more than {limit} syntax nodes"),
                "split the work into a smaller program",
            );
            return false;
        }
        if self.depth >= self.policy.source.max_depth {
            let limit = self.policy.source.max_depth;
            self.report(
                Rule::SourceLimits,
                range,
                format!("expressions or blocks nested deeper than {limit} levels"),
                "flatten the expression with intermediate variables",
            );
            return false;
        }
        self.depth += 1;
        true
    }
}

impl<'a> Visitor<'a> for Checker<'a> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        if !self.enter(stmt.range()) {
            return;
        }
        self.followed_positions(stmt);
        rules::dynamic::computed_code_string::check_stmt(self, stmt);
        match stmt {
            Stmt::Import(import) => self.import(import),
            Stmt::ImportFrom(import) => self.import_from(import),
            Stmt::FunctionDef(def) => self.function(def),
            Stmt::ClassDef(def) => self.class(def),
            _ => visitor::walk_stmt(self, stmt),
        }
        self.depth -= 1;
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        if !self.enter(expr.range()) {
            return;
        }
        match expr {
            Expr::Name(name) => {
                dunder_attribute::check_name(self, name);
                if name.ctx.is_load() {
                    let kind = self.use_kind(name.range);
                    let candidates = self.resolve(expr);
                    self.references(&candidates, name.range, kind);
                    self.module_value(&candidates, name.range, kind);
                }
            }
            Expr::Compare(compare) => {
                if compare
                    .ops
                    .iter()
                    .all(|op| matches!(op, ast::CmpOp::Is | ast::CmpOp::IsNot))
                {
                    let operands =
                        std::iter::once(compare.left.as_ref()).chain(&compare.comparators);
                    for operand in operands.filter(|operand| may_be_module(operand)) {
                        self.module_value_ok.insert(operand.range());
                    }
                }
                visitor::walk_expr(self, expr);
            }
            Expr::UnaryOp(unary) if unary.op == ast::UnaryOp::Not => {
                self.inert_test(&unary.operand);
                visitor::walk_expr(self, expr);
            }
            Expr::If(if_) => {
                self.inert_test(&if_.test);
                visitor::walk_expr(self, expr);
            }
            Expr::Attribute(_) => self.attribute_chain(expr),
            Expr::Call(call) => self.call(expr, call),
            Expr::StringLiteral(literal) => self.string(literal.value.to_str(), literal.range),
            Expr::FString(fstring) => {
                // Literal parts can be format templates too: `f"{{0.__mro__}}".format(x)`.
                self.fstring_template(fstring);
                visitor::walk_expr(self, expr);
            }
            Expr::Lambda(lambda) => self.lambda(lambda),
            Expr::ListComp(comp) => self.comprehension(&comp.generators, &[&comp.elt]),
            Expr::SetComp(comp) => self.comprehension(&comp.generators, &[&comp.elt]),
            Expr::Generator(comp) => self.comprehension(&comp.generators, &[&comp.elt]),
            Expr::DictComp(comp) => self.comprehension(&comp.generators, &[&comp.key, &comp.value]),
            _ => visitor::walk_expr(self, expr),
        }
        self.depth -= 1;
    }

    fn visit_pattern(&mut self, pattern: &'a ast::Pattern) {
        if !self.enter(pattern.range()) {
            return;
        }
        if let ast::Pattern::MatchClass(class) = pattern {
            for keyword in &class.arguments.keywords {
                self.attribute_name(
                    keyword.attr.id.as_str(),
                    keyword.attr.range,
                    AttributeSite::Attribute,
                );
            }
        }
        visitor::walk_pattern(self, pattern);
        self.depth -= 1;
    }
}
