/**
 * The `description` filters of phenotype and association searches: the schema allows a regular
 * expression (XPath flavour), and a client's pattern must never be able to stall the server. So
 * patterns are not handed to JavaScript's backtracking engine: they are parsed here (a bounded
 * subset of the syntax), compiled to a Thompson automaton and matched by a lazily built DFA, which
 * reads each character of a text once whatever the pattern: time is linear in the text.
 *
 * Supported: literals, `.`, `[...]` and `[^...]` with ranges, `\d \D \s \S \w \W`, escaped
 * metacharacters and `\n \r \t`, groups `(...)` and `(?:...)`, `|`, `* + ? {n} {n,} {n,m}` (a lazy `?`
 * after a quantifier is accepted: it changes nothing for a yes/no match), `^` and `$` (start and end of
 * the text). A pattern matches when it matches some part of the text, as XPath's `matches()` does;
 * case matters. Anything else (back-references, look-around, `\p{..}`, flags) is refused.
 */

export const MAX_PATTERN_LENGTH = 256;
/** Largest count in `{n,m}`. */
export const MAX_REPEAT = 100;
/** Largest compiled automaton: counted repetition multiplies states. */
export const MAX_STATES = 2000;
/** DFA states kept per pattern before the cache starts over (each costs at most MAX_STATES to build). */
const MAX_DFA_STATES = 4000;

export class PatternError extends Error {}

type Range = [number, number];
interface CharClass {
  negated: boolean;
  ranges: Range[];
  /** Unicode-aware classes (\w, \d, \s and their negations) as tests. */
  tests: Array<(c: number) => boolean>;
}

type Node =
  | { kind: 'chars'; cls: CharClass }
  | { kind: 'cat'; parts: Node[] }
  | { kind: 'alt'; options: Node[] }
  | { kind: 'repeat'; node: Node; min: number; max: number }
  | { kind: 'start' }
  | { kind: 'end' };

const isDigit = (c: number) => /\p{Nd}/u.test(String.fromCodePoint(c));
const isSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
const isWord = (c: number) => /[\p{L}\p{M}\p{N}_]/u.test(String.fromCodePoint(c));
const NEWLINE = 0x0a;
const RETURN = 0x0d;

function classOf(c: number): CharClass {
  return { negated: false, ranges: [[c, c]], tests: [] };
}

/** The class of `\d`, `\w`, ... or undefined for a letter that is not one. */
function shorthand(letter: string): ((c: number) => boolean) | undefined {
  switch (letter) {
    case 'd':
      return isDigit;
    case 'D':
      return (c) => !isDigit(c);
    case 's':
      return isSpace;
    case 'S':
      return (c) => !isSpace(c);
    case 'w':
      return isWord;
    case 'W':
      return (c) => !isWord(c);
    default:
      return undefined;
  }
}

const SINGLE_ESCAPES: Record<string, number> = { n: 0x0a, r: 0x0d, t: 0x09 };
const META = '\\|.?*+{}()[]^$-/';

class Parser {
  private pos = 0;
  constructor(private readonly text: string) {}

  parse(): Node {
    const node = this.alternation();
    if (this.pos < this.text.length) throw this.fail(`unexpected '${this.text[this.pos]}'`);
    return node;
  }

  private fail(why: string): PatternError {
    return new PatternError(`${why} at position ${this.pos + 1}`);
  }

  private peek(): string | undefined {
    return this.text[this.pos];
  }

  private alternation(): Node {
    const options = [this.concatenation()];
    while (this.peek() === '|') {
      this.pos++;
      options.push(this.concatenation());
    }
    return options.length === 1 ? options[0] : { kind: 'alt', options };
  }

  private concatenation(): Node {
    const parts: Node[] = [];
    while (this.pos < this.text.length && this.peek() !== '|' && this.peek() !== ')') parts.push(this.repetition());
    return parts.length === 1 ? parts[0] : { kind: 'cat', parts };
  }

  private repetition(): Node {
    const node = this.atom();
    const bounds = this.quantifier();
    if (!bounds) return node;
    if (this.peek() === '?') this.pos++; // lazy: the same set of matches
    if (this.quantifierAhead()) throw this.fail('a quantifier cannot follow another');
    if (node.kind === 'start' || node.kind === 'end') throw this.fail('nothing to repeat');
    return { kind: 'repeat', node, min: bounds[0], max: bounds[1] };
  }

  private quantifierAhead(): boolean {
    const c = this.peek();
    return c === '*' || c === '+' || c === '?' || c === '{';
  }

  private quantifier(): [number, number] | undefined {
    const c = this.peek();
    if (c === '*') return this.pos++, [0, Infinity];
    if (c === '+') return this.pos++, [1, Infinity];
    if (c === '?') return this.pos++, [0, 1];
    if (c !== '{') return undefined;
    const m = /^\{(\d{1,4})(,(\d{0,4}))?\}/.exec(this.text.slice(this.pos));
    if (!m) throw this.fail("'{' must start a count such as {2} or {1,3} (write \\{ for the character)");
    const min = Number(m[1]);
    const max = m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3]);
    if (min > MAX_REPEAT || (max !== Infinity && max > MAX_REPEAT)) throw this.fail(`counts above ${MAX_REPEAT} are not supported`);
    if (max < min) throw this.fail(`{${min},${max}} counts down`);
    this.pos += m[0].length;
    return [min, max];
  }

  private atom(): Node {
    const c = this.peek()!;
    switch (c) {
      case '(': {
        this.pos++;
        if (this.text.startsWith('?:', this.pos)) this.pos += 2;
        else if (this.peek() === '?') throw this.fail('only (?:...) groups are supported');
        const inner = this.alternation();
        if (this.peek() !== ')') throw this.fail("missing ')'");
        this.pos++;
        return inner;
      }
      case '[':
        return { kind: 'chars', cls: this.bracket() };
      case '.':
        this.pos++;
        return { kind: 'chars', cls: { negated: true, ranges: [[NEWLINE, NEWLINE], [RETURN, RETURN]], tests: [] } };
      case '^':
        this.pos++;
        return { kind: 'start' };
      case '$':
        this.pos++;
        return { kind: 'end' };
      case '\\':
        return { kind: 'chars', cls: this.escape() };
      case '*':
      case '+':
      case '?':
      case '{':
        throw this.fail('nothing to repeat');
      default: {
        const code = this.text.codePointAt(this.pos)!;
        this.pos += code > 0xffff ? 2 : 1;
        return { kind: 'chars', cls: classOf(code) };
      }
    }
  }

  /** After a backslash: a shorthand class or an escaped character. */
  private escape(): CharClass {
    this.pos++;
    const letter = this.peek();
    if (letter === undefined) throw this.fail('the pattern ends with a backslash');
    this.pos++;
    const test = shorthand(letter);
    if (test) return { negated: false, ranges: [], tests: [test] };
    if (letter in SINGLE_ESCAPES) return classOf(SINGLE_ESCAPES[letter]);
    if (META.includes(letter)) return classOf(letter.charCodeAt(0));
    this.pos--;
    throw this.fail(`'\\${letter}' is not supported`);
  }

  private bracket(): CharClass {
    this.pos++; // [
    const cls: CharClass = { negated: false, ranges: [], tests: [] };
    if (this.peek() === '^') {
      cls.negated = true;
      this.pos++;
    }
    let first = true;
    while (this.peek() !== ']' || first) {
      first = false;
      const c = this.peek();
      if (c === undefined) throw this.fail("missing ']'");
      if (c === '[') throw this.fail('nested classes and class subtraction are not supported');
      let low: number;
      if (c === '\\') {
        const escaped = this.escape();
        if (escaped.tests.length) {
          cls.tests.push(...escaped.tests);
          continue;
        }
        low = escaped.ranges[0][0];
      } else {
        low = this.text.codePointAt(this.pos)!;
        this.pos += low > 0xffff ? 2 : 1;
      }
      let high = low;
      if (this.peek() === '-' && this.text[this.pos + 1] !== ']' && this.text[this.pos + 1] !== undefined) {
        this.pos++;
        if (this.peek() === '\\') {
          const escaped = this.escape();
          if (escaped.tests.length) throw this.fail('a range cannot end with a class');
          high = escaped.ranges[0][0];
        } else {
          high = this.text.codePointAt(this.pos)!;
          this.pos += high > 0xffff ? 2 : 1;
        }
        if (high < low) throw this.fail('a range runs backwards');
      }
      cls.ranges.push([low, high]);
    }
    this.pos++; // ]
    return cls;
  }
}

// ---------------------------------------------------------------------------------------------------
// The automaton

type State =
  | { kind: 'chars'; cls: CharClass; out: number }
  | { kind: 'split'; out: number; out2: number }
  | { kind: 'start'; out: number }
  | { kind: 'end'; out: number }
  | { kind: 'match' };

function compile(root: Node): { states: State[]; start: number } {
  const states: State[] = [{ kind: 'match' }];
  const add = (s: State): number => {
    if (states.length >= MAX_STATES) throw new PatternError(`the pattern is too large once its counts are expanded (over ${MAX_STATES} states)`);
    states.push(s);
    return states.length - 1;
  };
  // Built backwards: each node is compiled knowing the state that follows it.
  const build = (node: Node, next: number): number => {
    switch (node.kind) {
      case 'chars':
        return add({ kind: 'chars', cls: node.cls, out: next });
      case 'start':
        return add({ kind: 'start', out: next });
      case 'end':
        return add({ kind: 'end', out: next });
      case 'cat': {
        let at = next;
        for (let i = node.parts.length - 1; i >= 0; i--) at = build(node.parts[i], at);
        return at;
      }
      case 'alt': {
        const starts = node.options.map((o) => build(o, next));
        let at = starts[starts.length - 1];
        for (let i = starts.length - 2; i >= 0; i--) at = add({ kind: 'split', out: starts[i], out2: at });
        return at;
      }
      case 'repeat': {
        let at: number;
        if (node.max === Infinity) {
          const loop = add({ kind: 'split', out: -1, out2: next });
          (states[loop] as { out: number }).out = build(node.node, loop);
          at = loop;
        } else {
          at = next;
          for (let i = 0; i < node.max - node.min; i++) at = add({ kind: 'split', out: build(node.node, at), out2: next });
        }
        for (let i = 0; i < node.min; i++) at = build(node.node, at);
        return at;
      }
    }
  };
  const start = build(root, 0);
  return { states, start };
}

function classHas(cls: CharClass, c: number): boolean {
  let hit = cls.ranges.some(([lo, hi]) => c >= lo && c <= hi) || cls.tests.some((t) => t(c));
  if (cls.negated) hit = !hit;
  return hit;
}

interface DState {
  /** NFA states that read a character, or wait for the end of the text. */
  states: number[];
  match: boolean;
  endMatch?: boolean;
  next: Map<number, DState>;
}

/** A compiled pattern: `test(text)` runs in time linear in the text. */
export class SafePattern {
  private readonly states: State[];
  private readonly start: number;
  private readonly cache = new Map<string, DState>();
  private readonly initial: DState;

  constructor(readonly source: string) {
    if (source.length > MAX_PATTERN_LENGTH) {
      throw new PatternError(`the pattern is ${source.length} characters long; at most ${MAX_PATTERN_LENGTH} are supported`);
    }
    ({ states: this.states, start: this.start } = compile(new Parser(source).parse()));
    this.initial = this.closure([this.start], true);
  }

  /** The states reachable from `from` without reading, at a position at the start of the text or not. */
  private closure(from: number[], atStart: boolean): DState {
    const seen = new Set<number>();
    const kept: number[] = [];
    let match = false;
    const stack = [...from];
    while (stack.length) {
      const i = stack.pop()!;
      if (seen.has(i)) continue;
      seen.add(i);
      const s = this.states[i];
      if (s.kind === 'match') match = true;
      else if (s.kind === 'split') stack.push(s.out2, s.out);
      else if (s.kind === 'start') {
        if (atStart) stack.push(s.out);
      } else kept.push(i); // chars, and `$` waiting for the end
    }
    kept.sort((a, b) => a - b);
    const key = (match ? 'm' : '') + kept.join(',') + (atStart ? 's' : '');
    let state = this.cache.get(key);
    if (!state) {
      if (this.cache.size >= MAX_DFA_STATES) {
        // Start over, unlinking the old states so that none stays reachable through another.
        for (const old of this.cache.values()) old.next.clear();
        this.cache.clear();
      }
      state = { states: kept, match, next: new Map() };
      this.cache.set(key, state);
    }
    return state;
  }

  private step(state: DState, c: number): DState {
    let next = state.next.get(c);
    if (next) return next;
    const moved: number[] = [this.start]; // unanchored: a match may begin at any position
    for (const i of state.states) {
      const s = this.states[i];
      if (s.kind === 'chars' && classHas(s.cls, c)) moved.push(s.out);
    }
    next = this.closure(moved, false);
    state.next.set(c, next);
    return next;
  }

  private matchesAtEnd(state: DState): boolean {
    if (state.endMatch === undefined) {
      // Follow the `$` states; nothing else can be read at the end.
      const seen = new Set<number>();
      const stack = state.states.filter((i) => this.states[i].kind === 'end');
      let found = false;
      while (stack.length && !found) {
        const i = stack.pop()!;
        if (seen.has(i)) continue;
        seen.add(i);
        const s = this.states[i];
        if (s.kind === 'match') found = true;
        else if (s.kind === 'split') stack.push(s.out, s.out2);
        else if (s.kind === 'end') stack.push(s.out);
      }
      state.endMatch = found;
    }
    return state.endMatch;
  }

  test(text: string): boolean {
    let state = this.initial;
    if (state.match) return true;
    for (let i = 0; i < text.length; ) {
      const c = text.codePointAt(i)!;
      i += c > 0xffff ? 2 : 1;
      state = this.step(state, c);
      if (state.match) return true;
    }
    return this.matchesAtEnd(state);
  }
}
