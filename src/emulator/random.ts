/**
 * Seeded randomness. The world is a pure function of the seed: a property of device `n` is `hash(seed, n,
 * salt)`, computed when asked, never stored. That is what lets 100,000 devices "exist" without 100,000
 * objects, and what makes the same seed give the same devices in any order of questions.
 */

/** A 32-bit hash of a seed given as a number or a string (cyrb53's mixing, folded to 32 bits). */
export function seedHash(seed: number | string): number {
  const s = String(seed);
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < s.length; i++) {
    const ch = s.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (h1 ^ h2) >>> 0;
}

function mixIn(h: number, k: number): number {
  k = Math.imul(k | 0, 0xcc9e2d51);
  k = (k << 15) | (k >>> 17);
  k = Math.imul(k, 0x1b873593);
  h ^= k;
  h = (h << 13) | (h >>> 19);
  return (Math.imul(h, 5) + 0xe6546b64) | 0;
}

/**
 * murmur3's mixing of up to four 32-bit words under a seed: well spread, and cheap enough to call per device
 * per request. Words beyond 2^32 are folded, so `n` may be any safe integer.
 */
export function hash32(seed: number, a: number, b = 0, c = 0): number {
  let h = seed | 0;
  h = mixIn(h, a);
  h = mixIn(h, Math.floor(a / 4294967296));
  h = mixIn(h, b);
  h = mixIn(h, c);
  h ^= 16;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** `hash32` as a number in [0, 1). */
export function unit(seed: number, a: number, b = 0, c = 0): number {
  return hash32(seed, a, b, c) / 4294967296;
}

/** A sequential generator (sfc32), for the few things drawn in order: account names, fault decisions. */
export class Random {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number) {
    this.a = hash32(seed, 1);
    this.b = hash32(seed, 2);
    this.c = hash32(seed, 3);
    this.d = hash32(seed, 4);
    for (let i = 0; i < 12; i++) this.next();
  }

  /** A number in [0, 1). */
  next(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return (t >>> 0) / 4294967296;
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)] as T;
  }

  /** `n` decimal digits, leading zeros kept. */
  digits(n: number): string {
    let s = '';
    for (let i = 0; i < n; i++) s += String(Math.floor(this.next() * 10));
    return s;
  }
}

/** The Luhn check digit of a string of decimal digits (IMEI, ICCID). */
export function luhnDigit(digits: string): number {
  let sum = 0;
  let double = true;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return (10 - (sum % 10)) % 10;
}

/** Whether a full identifier's last digit is the Luhn check digit of the others. */
export function luhnValid(id: string): boolean {
  return /^[0-9]{2,}$/.test(id) && luhnDigit(id.slice(0, -1)) === id.charCodeAt(id.length - 1) - 48;
}

export function hex(n: number, width: number): string {
  return (n >>> 0).toString(16).padStart(width, '0').slice(-width);
}

/**
 * A UUID-shaped identifier that encodes `(tag, x)` in its last group, so that it can be decoded back without
 * a lookup table; the other groups are a hash of the same, so a made-up UUID does not decode.
 */
export function codedUuid(seed: number, tag: number, x: number): string {
  const w0 = hash32(seed, x, tag, 0x51);
  const w1 = hash32(seed, x, tag, 0x52);
  const w2 = hash32(seed, x, tag, 0x53);
  const last = tag.toString(16) + Math.floor(x).toString(16).padStart(11, '0');
  return `${hex(w0, 8)}-${hex(w1 >>> 16, 4)}-4${hex(w1 & 0xfff, 3)}-${hex(0x8000 | (w2 & 0x3fff), 4)}-${last}`;
}

/** The `(tag, x)` a `codedUuid` was made from, or undefined for any other string. */
export function decodeUuid(seed: number, uuid: string): { tag: number; x: number } | undefined {
  const u = uuid.toLowerCase();
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(u)) return undefined;
  const tag = parseInt(u.slice(24, 25), 16);
  const x = parseInt(u.slice(25), 16);
  return codedUuid(seed, tag, x) === u ? { tag, x } : undefined;
}
