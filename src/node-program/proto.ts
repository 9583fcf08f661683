/**
 * The little protobuf the core's gRPC API needs (node-protocol.md §3): writing strings, varints
 * and nested messages, and reading a message into its fields. No schema, no dependency.
 */

const encoder = new TextEncoder();
const decoder = new TextDecoder();

const WIRE_VARINT = 0;
const WIRE_64 = 1;
const WIRE_BYTES = 2;
const WIRE_32 = 5;

function varint(value: number | bigint): number[] {
  let rest = BigInt(value);
  const out: number[] = [];
  while (rest > 127n) {
    out.push(Number(rest & 127n) | 128);
    rest >>= 7n;
  }
  out.push(Number(rest));
  return out;
}

/** A message being written; fields with proto3 default values are left out, as protoc does. */
export class ProtoWriter {
  private readonly bytes: number[] = [];

  varint(field: number, value: number | bigint | boolean): this {
    const number = typeof value === "boolean" ? Number(value) : value;
    if (number === 0 || number === 0n) return this;
    this.bytes.push(...varint((field << 3) | WIRE_VARINT), ...varint(number));
    return this;
  }

  bytesField(field: number, data: Uint8Array): this {
    this.bytes.push(...varint((field << 3) | WIRE_BYTES), ...varint(data.length), ...data);
    return this;
  }

  string(field: number, value: string): this {
    return value === "" ? this : this.bytesField(field, encoder.encode(value));
  }

  message(field: number, message: ProtoWriter): this {
    return this.bytesField(field, message.finish());
  }

  finish(): Uint8Array {
    return Uint8Array.from(this.bytes);
  }
}

export type ProtoField = { field: number; varint: bigint } | { field: number; bytes: Uint8Array };

/** The fields of a message in wire order (fixed-width fields are skipped: none are used here). */
export function readFields(buffer: Uint8Array): ProtoField[] {
  const fields: ProtoField[] = [];
  let at = 0;
  const readVarint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      const byte = buffer[at++];
      if (byte === undefined) throw new Error("truncated protobuf varint");
      result |= BigInt(byte & 127) << shift;
      if (byte < 128) return result;
      shift += 7n;
    }
  };
  while (at < buffer.length) {
    const key = Number(readVarint());
    const field = key >>> 3;
    const wire = key & 7;
    if (wire === WIRE_VARINT) fields.push({ field, varint: readVarint() });
    else if (wire === WIRE_BYTES) {
      const length = Number(readVarint());
      if (at + length > buffer.length) throw new Error("truncated protobuf field");
      fields.push({ field, bytes: buffer.subarray(at, at + length) });
      at += length;
    } else if (wire === WIRE_64) at += 8;
    else if (wire === WIRE_32) at += 4;
    else throw new Error(`unsupported protobuf wire type ${wire}`);
  }
  return fields;
}

export const readString = (bytes: Uint8Array) => decoder.decode(bytes);
