/**
 * Fingerprints of deleted facts, so a workflow can find and blank its quotations of them without
 * being told the facts: what a workflow is told goes into its history, and a deletion must not
 * write the deleted words into every conversation that held them. A fingerprint is a text's
 * length and two polynomial hashes (modulo primes near 2^26, bases drawn from a seed random per
 * deletion): 52 bits, far fewer than a fact of 12 characters or more holds, so it cannot be read
 * back; it can only confirm a guess of the exact text, as a record of the deletion's size could.
 * Found by Rabin-Karp: one pass over each string per length, in linear time, with no hashing
 * library (workflow code has none). Pure.
 */

/** Two primes just below 2^26: a rolling step stays under 2^53 (a character is at most 2^16). */
const P1 = 67_108_859;
const P2 = 67_108_837;

/** A text as a deletion fingerprints it. */
export interface Fingerprint {
  /** Its length, in UTF-16 code units (JavaScript's string length). */
  length: number;
  /** The two hashes, as `<h1>.<h2>` in base 36. */
  hash: string;
}

/** The bases of a seed (hex): two numbers in [256, P) drawn from it. */
function basesOf(seed: string): [number, number] {
  // FNV-1a over the seed's characters, twice with different offsets: any seed gives bases.
  const mix = (offset: number, p: number) => {
    let h = offset >>> 0;
    for (let i = 0; i < seed.length; i++) h = Math.imul(h ^ seed.charCodeAt(i), 16_777_619) >>> 0;
    return 256 + (h % (p - 256));
  };
  return [mix(2_166_136_261, P1), mix(3_735_928_559, P2)];
}

/** `a * b mod p` for a, b < 2^26 (exact: the product is under 2^53). */
function mulmod(a: number, b: number, p: number): number {
  return (a * b) % p;
}

/** The fingerprint of `text` under `seed`. */
export function fingerprint(text: string, seed: string): Fingerprint {
  const [b1, b2] = basesOf(seed);
  let h1 = 0;
  let h2 = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = (mulmod(h1, b1, P1) + c) % P1;
    h2 = (mulmod(h2, b2, P2) + c) % P2;
  }
  return { length: text.length, hash: `${h1.toString(36)}.${h2.toString(36)}` };
}

/**
 * Where `s` holds a text with one of `prints` (under `seed`): the ranges `[start, end)`, left to
 * right, none overlapping (of two that overlap, the one that starts first).
 */
export function findFingerprints(s: string, prints: readonly Fingerprint[], seed: string): Array<[number, number]> {
  if (prints.length === 0 || s.length === 0) return [];
  const [b1, b2] = basesOf(seed);
  const found: Array<[number, number]> = [];
  const byLength = new Map<number, Set<string>>();
  for (const p of prints) {
    if (p.length <= 0 || p.length > s.length) continue;
    const set = byLength.get(p.length) ?? new Set<string>();
    set.add(p.hash);
    byLength.set(p.length, set);
  }
  for (const [length, hashes] of byLength) {
    // b^(length-1): what the character leaving the window weighed.
    let w1 = 1;
    let w2 = 1;
    for (let i = 1; i < length; i++) {
      w1 = mulmod(w1, b1, P1);
      w2 = mulmod(w2, b2, P2);
    }
    let h1 = 0;
    let h2 = 0;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (i >= length) {
        const out = s.charCodeAt(i - length);
        h1 = (h1 - mulmod(out, w1, P1) + P1) % P1;
        h2 = (h2 - mulmod(out, w2, P2) + P2) % P2;
      }
      h1 = (mulmod(h1, b1, P1) + c) % P1;
      h2 = (mulmod(h2, b2, P2) + c) % P2;
      if (i >= length - 1 && hashes.has(`${h1.toString(36)}.${h2.toString(36)}`)) found.push([i - length + 1, i + 1]);
    }
  }
  found.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
  const kept: Array<[number, number]> = [];
  for (const range of found) if (!kept.length || range[0] >= kept[kept.length - 1]![1]) kept.push(range);
  return kept;
}
