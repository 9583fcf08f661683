/**
 * Real, decodable images for the upload tests. The PNGs are built here (correct CRCs, deflated
 * pixels); the JPEG and the WebP are CPython's 16×16 test images (Lib/test/test_email/data).
 */
import { crc32, deflateSync } from "node:zlib";

export const JPEG = Buffer.from(
  "/9j/4AAQSkZJRgABAQEAAQABAAD/2wBDAAMCAgICAgMCAgIDAwMDBAYEBAQEBAgGBgUGCQgKCgkICQkKDA8MCgsOCwkJDRENDg8QEBEQCgwSExIQEw8QEBD/2wBDAQMDAwQDBAgEBAgQCwkLEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBD/wAARCAAQABADASIAAhEBAxEB/8QAFgABAQEAAAAAAAAAAAAAAAAABwQF/8QAJBAAAQQBBAICAwAAAAAAAAAAAQIDBAYFBwgSExEiABQJMTL/xAAVAQEBAAAAAAAAAAAAAAAAAAAABv/EACMRAAECBQMFAAAAAAAAAAAAAAECEQMEBQYhABIxFRZhgeH/2gAMAwEAAhEDEQA/ABSm0mobc8HmExLUlRzzEWPkJWW+ulrsaUVAseUgslSlH9LKuPryIKuWPZdskzXmm3fX5m2nF4GlVxx/HOpx4ks51+MiU/Iaad7UcUo4tILoS4kqcWkezS0hO/HvuRp0rO6hWnWO1UisZVuFi4GFeyEpmGepa5S5SWVPuciFKRFLgSrwetnyPIB+Vb4N9mKhQMzo5po9XLdDs9d6ZVix2VEhiL9kuNPxw2gEKcDQ/rs8AuA8VAe0vdl7VOYn+27flGAUgmITjbhSmCg3BYlyeWDkMolvw4KOp1KM6iCNvngZHwetf//Z",
  "base64",
);

export const WEBP = Buffer.from(
  "UklGRqgBAABXRUJQVlA4WAoAAAAQAAAADwAADwAAQUxQSMMAAAABJ6KokSTleucYX+ffKpmImP90cY3gJjDi4Yt3MsjBEVyDKzDosHgVjnhRNcEIDAJPkqBqsFUZHNa2bUYvTsZ2PLbtd/uvKa4hov9J0f2PkPe6REkkGzolkTTzFG0Ox9PlFiD0CxS+kOGDtxoynjaCfx0pfk52CPuInrOR75lzRugygtv4zEiy90UwfSD9NheMITJWLaXWayO8XeOlWRXVnIGk2W6WdYoYMQ+KqixQNPowgt+6a1BSKbUtz+lUFAoBAAAAVlA4IL4AAACQAgCdASoQABAAAwA0JbACdDBPCIUMfAMdCCz96AD+/XSg/QKbH4r3Q3ycN/bSDK/T/zVo4u6nvclvG/SqxWOuup+XhN9BojvaW+Tv+MvxvX/hr/o/5Qns9LtmX/+qKdl/yWznhuasl7nkxvSTI4xf3Y85VSB/lU/8Ofj/b9JrA+ifvIOYZm2x1RP/dhfmsf5diuSfR7+z+r/+HR3zEo/+XM/B+vkYw73Pzx+ROaAB/ZoBSzEs3rzZe6qsAAAA",
  "base64",
);

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function chunk(type: string, data: Uint8Array): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, "latin1");
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

type Rgb = readonly [number, number, number];

/** A `width`×`height` 8-bit RGB PNG coloured by `pixel`, with extra chunks (type, data) before IEND. */
export function pngImage(
  width: number,
  height: number,
  pixel: (x: number, y: number) => Rgb,
  extra: [string, Uint8Array][] = [],
): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8-bit RGB, no interlace
  const rows: number[] = [];
  for (let y = 0; y < height; y++) {
    rows.push(0); // filter: none
    for (let x = 0; x < width; x++) rows.push(...pixel(x, y));
  }
  return Buffer.concat([
    PNG_SIGNATURE,
    chunk("IHDR", header),
    chunk("IDAT", deflateSync(Buffer.from(rows))),
    ...extra.map(([type, data]) => chunk(type, data)),
    chunk("IEND", new Uint8Array(0)),
  ]);
}

/** A 1×1 red RGB PNG, with extra chunks (type, data) between the pixels and IEND. */
export const png = (extra: [string, Uint8Array][] = []): Buffer => pngImage(1, 1, () => [0xff, 0, 0], extra);

/** A `size`×`size` PNG in four coloured quadrants: an avatar that is visible in screenshots. */
export const quadrantPng = (size = 32): Buffer =>
  pngImage(size, size, (x, y) => {
    const top = y < size / 2;
    const left = x < size / 2;
    return top ? (left ? [31, 111, 235] : [247, 144, 9]) : left ? [18, 161, 80] : [217, 45, 32];
  });

/** A valid PNG of exactly `size` bytes: the 1×1 image padded with a private ancillary chunk. */
export function pngOfSize(size: number): Buffer {
  const padding = size - png().length - 12;
  const sized = png([["prVt", new Uint8Array(padding)]]);
  if (sized.length !== size) throw new Error(`built ${sized.length} bytes, wanted ${size}`);
  return sized;
}

/**
 * A valid PNG of exactly `size` bytes whose padding chunk runs through every byte value (NUL and
 * the high half included, no markup): proves an upload comes back byte for byte.
 */
export function everyBytePng(size: number): Buffer {
  const padding = new Uint8Array(size - png().length - 12).map((_, i) => (i * 7 + (i >> 8)) % 256);
  const sized = png([["prVt", padding]]);
  if (sized.length !== size) throw new Error(`built ${sized.length} bytes, wanted ${size}`);
  return sized;
}
