/**
 * Integer hashing and smooth value noise for the demo generator. Everything is
 * a pure function of its integer keys, so a demo series is reproducible from
 * (seed, site, issue) alone: no Math.random, no clock, no hidden state.
 */

/** A 32-bit avalanche mix (the "lowbias32" constants): every input bit flips about half the output bits. */
export function mix32(x: number): number {
  x ^= x >>> 16;
  x = Math.imul(x, 0x7feb352d);
  x ^= x >>> 15;
  x = Math.imul(x, 0x846ca68b);
  x ^= x >>> 16;
  return x >>> 0;
}

/**
 * Folds one more integer into a running hash. The additive constant keeps a
 * zero key from mapping to zero (mix32(0) === 0).
 */
export function hashStep(h: number, v: number): number {
  return mix32(((h ^ v) + 0x9e3779b9) | 0);
}

/** FNV-1a over the UTF-16 code units, then mixed: a stable 32-bit key for a farm id. */
export function hashString(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return mix32(h);
}

/**
 * A roughly standard-normal value for lattice point i of a noise channel: the
 * sum of the four bytes of one hash (Irwin-Hall, mean 510, variance 4 * 5461.25),
 * standardised. One hash per knot keeps the generator fast.
 */
function knot(key: number, i: number): number {
  const h = hashStep(key, i | 0);
  const sum = (h & 0xff) + ((h >>> 8) & 0xff) + ((h >>> 16) & 0xff) + (h >>> 24);
  return (sum - 510) / 147.80054;
}

/** Catmull-Rom interpolation between p1 and p2 at fraction f: continuous value and slope at the knots. */
function catmullRom(p0: number, p1: number, p2: number, p3: number, f: number): number {
  return p1 + 0.5 * f * (p2 - p0 + f * (2 * p0 - 5 * p1 + 4 * p2 - p3 + f * (3 * (p1 - p2) + p3 - p0)));
}

/**
 * Value noise on a unit lattice, Catmull-Rom interpolated so that it is smooth
 * (continuous slope) at the knots: a chart of it shows no corners. Standard
 * deviation is 1 at the knots and about 0.8 half way between.
 */
export function smoothNoise(key: number, x: number): number {
  const i = Math.floor(x);
  return catmullRom(knot(key, i - 1), knot(key, i), knot(key, i + 1), knot(key, i + 2), x - i);
}

/** One band of a multi-scale noise: lattice spacing in hours and its weight. */
export interface Octave {
  readonly periodH: number;
  readonly weight: number;
}

/** One octave with the four knots around the last lattice cell it was asked for. */
class Band {
  private cell = NaN;
  private p0 = 0;
  private p1 = 0;
  private p2 = 0;
  private p3 = 0;

  constructor(
    private readonly key: number,
    private readonly perHour: number,
    private readonly phase: number,
    readonly weight: number,
  ) {}

  // A series walks forward in 15-minute steps, so nearly every call lands in
  // the cell of the previous one and the knot hashes can be reused.
  at(hours: number): number {
    const x = hours * this.perHour + this.phase;
    const i = Math.floor(x);
    if (i !== this.cell) {
      this.cell = i;
      this.p0 = knot(this.key, i - 1);
      this.p1 = knot(this.key, i);
      this.p2 = knot(this.key, i + 1);
      this.p3 = knot(this.key, i + 2);
    }
    return catmullRom(this.p0, this.p1, this.p2, this.p3, x - i);
  }
}

/**
 * A multi-scale noise channel of time in hours. Weights are normalised so the
 * channel keeps roughly unit variance whatever the octave mix; each octave is
 * keyed separately and phase-shifted so their knots do not line up.
 */
export class NoiseChannel {
  private readonly bands: Band[];

  constructor(key: number, octaves: readonly Octave[]) {
    const norm = Math.sqrt(octaves.reduce((s, o) => s + o.weight * o.weight, 0)) || 1;
    this.bands = octaves.map((o, j) => {
      const k = hashStep(key, 0x51ed27 + j);
      return new Band(k, 1 / o.periodH, (k & 0xffff) / 65536, o.weight / norm);
    });
  }

  at(hours: number): number {
    let v = 0;
    for (const b of this.bands) v += b.weight * b.at(hours);
    return v;
  }
}
