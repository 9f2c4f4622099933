/**
 * Which addresses a webhook may be sent to (INTERFACE.md section 14). A
 * webhook's URL is given by whoever adds the endpoint; sent from inside the
 * network it would reach what only the server can reach (its own loopback, a
 * database on the private network, a cloud metadata service on a link-local
 * address). So, unless `serve --webhook-allow-private`, the host is resolved
 * at send time and only public addresses are used, and the connection goes to
 * the address that was checked (deliverer.ts), never to a second resolution.
 *
 * Refused: loopback, private (RFC 1918, and IPv6 site-local), link-local,
 * unique-local (fc00::/7), CGNAT (100.64.0.0/10), unspecified (0.0.0.0/8,
 * ::), multicast, reserved and documentation ranges, and each of these inside
 * the IPv6 forms that carry an IPv4 address (IPv4-mapped ::ffff:a.b.c.d,
 * IPv4-compatible ::a.b.c.d, NAT64 64:ff9b::/96, 6to4 2002::/16).
 */
import { isIPv4, isIPv6 } from 'node:net';

export type AddressKind =
  | 'public'
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'unique-local'
  | 'cgnat'
  | 'unspecified'
  | 'multicast'
  | 'reserved'
  | 'not an address';

function ipv4Bytes(text: string): number[] | undefined {
  if (!isIPv4(text)) return undefined;
  return text.split('.').map(Number);
}

/** The 16 bytes of an IPv6 address (a zone `%...` is ignored), or undefined. */
function ipv6Bytes(text: string): number[] | undefined {
  let bare = text.replace(/%.*$/, '');
  if (!isIPv6(bare)) return undefined;
  // A dotted IPv4 tail ("::ffff:10.0.0.1") as its two groups.
  const dotted = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(bare);
  if (dotted !== null) {
    const v4 = ipv4Bytes(dotted[2]!);
    if (v4 === undefined) return undefined;
    bare = `${dotted[1]}${((v4[0]! << 8) | v4[1]!).toString(16)}:${((v4[2]! << 8) | v4[3]!).toString(16)}`;
  }
  const parse = (part: string): number[] => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  const gap = bare.indexOf('::');
  let groups: number[];
  if (gap >= 0) {
    const left = parse(bare.slice(0, gap));
    const right = parse(bare.slice(gap + 2));
    groups = [...left, ...new Array<number>(Math.max(0, 8 - left.length - right.length)).fill(0), ...right];
  } else {
    groups = parse(bare);
  }
  if (groups.length !== 8 || groups.some((g) => !(g >= 0 && g <= 0xffff))) return undefined;
  return groups.flatMap((g) => [g >> 8, g & 0xff]);
}

function kindOfIpv4(b: readonly number[]): AddressKind {
  const [a, b1, c] = b as [number, number, number, number];
  if (a === 0) return 'unspecified';
  if (a === 127) return 'loopback';
  if (a === 10 || (a === 172 && b1 >= 16 && b1 <= 31) || (a === 192 && b1 === 168)) return 'private';
  if (a === 169 && b1 === 254) return 'link-local';
  if (a === 100 && b1 >= 64 && b1 <= 127) return 'cgnat';
  if (a >= 224 && a <= 239) return 'multicast';
  if (a >= 240) return 'reserved'; // 240.0.0.0/4 and the broadcast address
  if (a === 192 && b1 === 0 && (c === 0 || c === 2)) return 'reserved'; // protocol assignments, documentation
  if (a === 198 && (b1 === 18 || b1 === 19)) return 'reserved'; // benchmarking
  if ((a === 198 && b1 === 51 && c === 100) || (a === 203 && b1 === 0 && c === 113)) return 'reserved'; // documentation
  return 'public';
}

function kindOfIpv6(b: readonly number[]): AddressKind {
  const zeros = (from: number, to: number): boolean => b.slice(from, to).every((x) => x === 0);
  if (zeros(0, 16)) return 'unspecified';
  if (zeros(0, 15) && b[15] === 1) return 'loopback';
  // IPv4-mapped ::ffff:a.b.c.d and IPv4-compatible ::a.b.c.d: the IPv4 address decides.
  if (zeros(0, 10) && b[10] === 0xff && b[11] === 0xff) return kindOfIpv4(b.slice(12));
  if (zeros(0, 12)) return kindOfIpv4(b.slice(12));
  // NAT64 64:ff9b::/96 and 6to4 2002::/16 carry an IPv4 address too.
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zeros(4, 12)) return kindOfIpv4(b.slice(12));
  if (b[0] === 0x20 && b[1] === 0x02) {
    const inner = kindOfIpv4(b.slice(2, 6));
    if (inner !== 'public') return inner;
  }
  if (b[0] === 0xfe && (b[1]! & 0xc0) === 0x80) return 'link-local';
  if (b[0] === 0xfe && (b[1]! & 0xc0) === 0xc0) return 'private'; // site-local, deprecated
  if ((b[0]! & 0xfe) === 0xfc) return 'unique-local';
  if (b[0] === 0xff) return 'multicast';
  if (b[0] === 0x01 && b[1] === 0x00 && zeros(2, 8)) return 'reserved'; // discard-only 100::/64
  if (b[0] === 0x20 && b[1] === 0x01 && b[2] === 0x0d && b[3] === 0xb8) return 'reserved'; // documentation
  return 'public';
}

/** What an IP address (v4 or v6, without brackets) is; 'public' is the only kind sent to by default. */
export function addressKind(ip: string): AddressKind {
  const v4 = ipv4Bytes(ip);
  if (v4 !== undefined) return kindOfIpv4(v4);
  const v6 = ipv6Bytes(ip);
  if (v6 !== undefined) return kindOfIpv6(v6);
  return 'not an address';
}
