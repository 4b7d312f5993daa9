/**
 * A caller's visibility query (`GET /runs?query=`, `list --query`), parsed and written again in a
 * canonical form before it is joined to the filters a server puts first (the tenant's, the
 * workflow types'). Splicing the caller's text into a query that carries a security filter is not
 * safe however it is checked: Temporal's SQL tokenizer reads `\'` inside a string as an escaped
 * quote, so a check that counts quotes and parentheses differently from it lets a query close the
 * group it was put in (`'a\' ' ) OR ( AgentTenant = 'globex' ) OR ( WorkflowId = 'b\' '`). Here the
 * query is read as Temporal reads it (its grammar for list filters: comparisons, IN, BETWEEN,
 * STARTS_WITH, IS NULL, AND, OR, parentheses) and printed from the parsed tree, with every string
 * quoted by this module: what reaches Temporal has exactly the structure parsed here.
 *
 * Hand-written: Temporal publishes no parser for its list filter in TypeScript, and a general SQL
 * parser would accept (and print) far more than the filter language.
 */

/** The longest query accepted, in characters. */
export const MAX_LIST_QUERY_LENGTH = 4_000;

/** How deep parentheses may nest. */
const MAX_DEPTH = 32;

type Token =
  | { kind: 'ident'; text: string }
  | { kind: 'string'; text: string }
  | { kind: 'number'; text: string }
  | { kind: 'word'; text: string } // a keyword, upper-cased
  | { kind: 'op'; text: string }
  | { kind: 'punct'; text: '(' | ')' | ',' };

/** Words of the filter language; anything else unquoted is a search attribute's name. */
const KEYWORDS = new Set(['AND', 'OR', 'NOT', 'IN', 'BETWEEN', 'IS', 'NULL', 'STARTS_WITH', 'TRUE', 'FALSE']);

/** Words Temporal's SQL knows but its list filter does not take here, named in the refusal. */
const REFUSED_WORDS = new Set(['ORDER', 'BY', 'LIMIT', 'LIKE', 'SELECT', 'FROM', 'WHERE', 'GROUP', 'UNION']);

const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A parse failure, with the sentence for the caller. */
class QueryProblem extends Error {}

function tokenize(query: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < query.length) {
    const c = query[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (c === "'" || c === '"') {
      // As Temporal's tokenizer: a backslash escapes the next character, a doubled quote is one.
      let text = '';
      i++;
      for (;;) {
        if (i >= query.length) throw new QueryProblem(`a string is not closed (its ${c} has no partner)`);
        const d = query[i]!;
        if (d === '\\') {
          if (i + 1 >= query.length) throw new QueryProblem('a string ends with a backslash');
          text += unescape(query[i + 1]!);
          i += 2;
        } else if (d === c) {
          if (query[i + 1] === c) {
            text += c;
            i += 2;
          } else {
            i++;
            break;
          }
        } else {
          text += d;
          i++;
        }
      }
      tokens.push({ kind: 'string', text });
      continue;
    }
    if (c === '`') {
      const end = query.indexOf('`', i + 1);
      if (end < 0) throw new QueryProblem('a `quoted` name is not closed');
      const name = query.slice(i + 1, end);
      if (!IDENT.test(name) && !/^[A-Za-z_][A-Za-z0-9_ .-]*$/.test(name))
        throw new QueryProblem(`\`${name}\` is not a search attribute name`);
      tokens.push({ kind: 'ident', text: name });
      i = end + 1;
      continue;
    }
    const number = /^-?\d+(\.\d+)?/.exec(query.slice(i));
    if (number && (c !== '-' || !lastIsValue(tokens))) {
      tokens.push({ kind: 'number', text: number[0] });
      i += number[0].length;
      continue;
    }
    const op = /^(!=|<>|<=|>=|=|<|>)/.exec(query.slice(i));
    if (op) {
      tokens.push({ kind: 'op', text: op[0] === '<>' ? '!=' : op[0] });
      i += op[0].length;
      continue;
    }
    if (c === '(' || c === ')' || c === ',') {
      tokens.push({ kind: 'punct', text: c });
      i++;
      continue;
    }
    const word = /^[A-Za-z_][A-Za-z0-9_]*/.exec(query.slice(i));
    if (word) {
      const upper = word[0].toUpperCase();
      if (KEYWORDS.has(upper)) tokens.push({ kind: 'word', text: upper });
      else if (REFUSED_WORDS.has(upper))
        throw new QueryProblem(`${upper} is not part of a list filter (the list is always newest first)`);
      else tokens.push({ kind: 'ident', text: word[0] });
      i += word[0].length;
      continue;
    }
    throw new QueryProblem(`unexpected ${JSON.stringify(c)} at character ${i + 1}`);
  }
  return tokens;
}

/** The character an escape stands for, as Temporal's tokenizer decodes it (`\n`, `\t`, ...; others as themselves). */
function unescape(c: string): string {
  const decoded: Record<string, string> = { '0': '\0', b: '\b', n: '\n', r: '\r', t: '\t', Z: '\x1a' };
  return decoded[c] ?? c;
}

function lastIsValue(tokens: Token[]): boolean {
  const last = tokens[tokens.length - 1];
  return last !== undefined && (last.kind === 'ident' || last.kind === 'string' || last.kind === 'number');
}

type Value = { kind: 'string' | 'number' | 'bool'; text: string };
type Node =
  | { kind: 'or' | 'and'; items: Node[] }
  | { kind: 'group'; inner: Node }
  | { kind: 'compare'; column: string; op: string; value: Value }
  | { kind: 'in'; column: string; not: boolean; values: Value[] }
  | { kind: 'between'; column: string; not: boolean; low: Value; high: Value }
  | { kind: 'starts'; column: string; not: boolean; value: Value }
  | { kind: 'null'; column: string; not: boolean };

class Parser {
  private at = 0;
  constructor(private readonly tokens: Token[]) {}

  parse(): Node {
    const node = this.or(0);
    const left = this.tokens[this.at];
    if (left)
      throw new QueryProblem(`unexpected ${describe(left)}${left.text === ')' ? ' (a ")" closes no "(")' : ''}`);
    return node;
  }

  private or(depth: number): Node {
    const items = [this.and(depth)];
    while (this.word('OR')) items.push(this.and(depth));
    return items.length === 1 ? items[0]! : { kind: 'or', items };
  }

  private and(depth: number): Node {
    const items = [this.primary(depth)];
    while (this.word('AND')) items.push(this.primary(depth));
    return items.length === 1 ? items[0]! : { kind: 'and', items };
  }

  private primary(depth: number): Node {
    if (this.punct('(')) {
      if (depth >= MAX_DEPTH) throw new QueryProblem(`parentheses nest deeper than ${MAX_DEPTH}`);
      const inner = this.or(depth + 1);
      if (!this.punct(')')) throw new QueryProblem(`a "(" is not closed (found ${describe(this.peek())})`);
      return { kind: 'group', inner };
    }
    const t = this.next();
    if (t?.kind !== 'ident') throw new QueryProblem(`expected a search attribute's name, found ${describe(t)}`);
    const column = t.text;
    if (this.word('IS')) {
      const not = this.word('NOT');
      if (!this.word('NULL')) throw new QueryProblem(`expected NULL after "${column} IS${not ? ' NOT' : ''}"`);
      return { kind: 'null', column, not };
    }
    const not = this.word('NOT');
    if (this.word('IN')) {
      if (!this.punct('(')) throw new QueryProblem(`expected "(" after "${column}${not ? ' NOT' : ''} IN"`);
      const values = [this.value()];
      while (this.punct(',')) values.push(this.value());
      if (!this.punct(')')) throw new QueryProblem(`the list after "${column} IN" is not closed`);
      return { kind: 'in', column, not, values };
    }
    if (this.word('BETWEEN')) {
      const low = this.value();
      if (!this.word('AND')) throw new QueryProblem(`expected AND in "${column} BETWEEN ... AND ..."`);
      return { kind: 'between', column, not, low, high: this.value() };
    }
    if (this.word('STARTS_WITH')) return { kind: 'starts', column, not, value: this.value() };
    if (not) throw new QueryProblem(`expected IN, BETWEEN or STARTS_WITH after "${column} NOT"`);
    const op = this.next();
    if (op?.kind !== 'op') throw new QueryProblem(`expected a comparison after "${column}", found ${describe(op)}`);
    return { kind: 'compare', column, op: op.text, value: this.value() };
  }

  private value(): Value {
    const t = this.next();
    if (t?.kind === 'string') return { kind: 'string', text: t.text };
    if (t?.kind === 'number') return { kind: 'number', text: t.text };
    if (t?.kind === 'word' && (t.text === 'TRUE' || t.text === 'FALSE'))
      return { kind: 'bool', text: t.text.toLowerCase() };
    throw new QueryProblem(`expected a value ('text', a number, true or false), found ${describe(t)}`);
  }

  private peek(): Token | undefined {
    return this.tokens[this.at];
  }

  private next(): Token | undefined {
    return this.tokens[this.at++];
  }

  private word(text: string): boolean {
    const t = this.peek();
    if (t?.kind !== 'word' || t.text !== text) return false;
    this.at++;
    return true;
  }

  private punct(text: string): boolean {
    const t = this.peek();
    if (t?.kind !== 'punct' || t.text !== text) return false;
    this.at++;
    return true;
  }
}

function describe(t: Token | undefined): string {
  if (t === undefined) return 'the end of the query';
  if (t.kind === 'string') return `the string ${quote(t.text)}`;
  return `"${t.text}"`;
}

/**
 * A string as Temporal's tokenizer reads it back as one string: single quotes, with backslashes
 * and quotes escaped (control characters too, so the query stays one printable line).
 */
function quote(text: string): string {
  const escapes: Record<string, string> = {
    '\\': '\\\\',
    "'": "\\'",
    '\0': '\\0',
    '\n': '\\n',
    '\r': '\\r',
    '\t': '\\t',
    '\b': '\\b',
    '\x1a': '\\Z',
  };
  return `'${text.replace(/[\\'\0\n\r\t\b\x1a]/g, (c) => escapes[c]!)}'`;
}

function column(name: string): string {
  return IDENT.test(name) ? name : `\`${name}\``;
}

function value(v: Value): string {
  return v.kind === 'string' ? quote(v.text) : v.text;
}

function print(node: Node): string {
  switch (node.kind) {
    case 'or':
      return node.items.map(print).join(' OR ');
    case 'and':
      // AND binds tighter than OR: an OR inside an AND keeps its parentheses (a group already has them).
      return node.items.map((n) => (n.kind === 'or' ? `(${print(n)})` : print(n))).join(' AND ');
    case 'group':
      return `(${print(node.inner)})`;
    case 'compare':
      return `${column(node.column)} ${node.op} ${value(node.value)}`;
    case 'in':
      return `${column(node.column)}${node.not ? ' NOT' : ''} IN (${node.values.map(value).join(', ')})`;
    case 'between':
      return `${column(node.column)}${node.not ? ' NOT' : ''} BETWEEN ${value(node.low)} AND ${value(node.high)}`;
    case 'starts':
      return `${column(node.column)}${node.not ? ' NOT' : ''} STARTS_WITH ${value(node.value)}`;
    case 'null':
      return `${column(node.column)} IS${node.not ? ' NOT' : ''} NULL`;
  }
}

/**
 * A list filter read as Temporal reads it and printed again canonically (`{ query }`), or why it
 * is not one (`{ problem }`). The printed query holds no text of the caller's outside strings this
 * module quoted, so it can be put in parentheses after a security filter and stay inside them.
 */
export function canonicalListQuery(query: string): { query: string } | { problem: string } {
  if (!query.trim()) return { problem: 'the query must not be empty' };
  if (query.length > MAX_LIST_QUERY_LENGTH)
    return { problem: `the query is longer than ${MAX_LIST_QUERY_LENGTH} characters` };
  try {
    return { query: print(new Parser(tokenize(query)).parse()) };
  } catch (err) {
    if (err instanceof QueryProblem) return { problem: `the query is not a list filter: ${err.message}` };
    throw err;
  }
}
