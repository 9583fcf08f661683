/**
 * The part of WebAuthn Level 2 a passkey as a second factor needs, with node:crypto: CBOR (RFC 8949,
 * the subset authenticators send), authenticator data, COSE public keys (ES256, RS256), checking a
 * registration ("none" attestation: the key is trusted because the signed-in account adds it) and
 * an assertion. Pure: the caller supplies the expected challenge, origins and RP id.
 */
import { createHash, createPublicKey, type KeyObject, verify } from "node:crypto";

export type Cbor =
  | number
  | bigint
  | string
  | Uint8Array
  | boolean
  | null
  | undefined
  | Cbor[]
  | Map<Cbor, Cbor>;

/** Decodes one CBOR item at `offset`: the item and the offset after it. */
export function decodeCbor(bytes: Uint8Array, offset = 0): [Cbor, number] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const initial = bytes[offset] as number;
  const major = initial >> 5;
  const info = initial & 31;
  let at = offset + 1;
  let length: number;
  if (info < 24) length = info;
  else if (info === 24) length = view.getUint8(at++);
  else if (info === 25) {
    length = view.getUint16(at);
    at += 2;
  } else if (info === 26) {
    length = view.getUint32(at);
    at += 4;
  } else if (info === 27) {
    length = Number(view.getBigUint64(at));
    at += 8;
  } else throw new Error("CBOR: indefinite lengths are not supported");
  switch (major) {
    case 0:
      return [length, at];
    case 1:
      return [-1 - length, at];
    case 2:
      return [bytes.slice(at, at + length), at + length];
    case 3:
      return [new TextDecoder().decode(bytes.slice(at, at + length)), at + length];
    case 4: {
      const items: Cbor[] = [];
      for (let i = 0; i < length; i++) {
        const [item, next] = decodeCbor(bytes, at);
        items.push(item);
        at = next;
      }
      return [items, at];
    }
    case 5: {
      const map = new Map<Cbor, Cbor>();
      for (let i = 0; i < length; i++) {
        const [key, afterKey] = decodeCbor(bytes, at);
        const [value, afterValue] = decodeCbor(bytes, afterKey);
        map.set(key, value);
        at = afterValue;
      }
      return [map, at];
    }
    case 7:
      if (info === 20) return [false, at];
      if (info === 21) return [true, at];
      if (info === 22) return [null, at];
      throw new Error("CBOR: unsupported simple value");
    default:
      throw new Error("CBOR: tags are not supported");
  }
}

export const sha256 = (data: Uint8Array | string) => createHash("sha256").update(data).digest();
export const toBase64Url = (data: Uint8Array) => Buffer.from(data).toString("base64url");
export const fromBase64Url = (text: string) => Buffer.from(text, "base64url");

/** Authenticator data (WebAuthn §6.1). */
export interface AuthenticatorData {
  rpIdHash: Buffer;
  userPresent: boolean;
  signCount: number;
  credentialId?: Buffer;
  publicKey?: Map<Cbor, Cbor>;
}

export function parseAuthenticatorData(data: Uint8Array): AuthenticatorData {
  const bytes = Buffer.from(data);
  if (bytes.length < 37) throw new Error("authenticator data too short");
  const flags = bytes[32] as number;
  const parsed: AuthenticatorData = {
    rpIdHash: bytes.subarray(0, 32),
    userPresent: (flags & 0x01) !== 0,
    signCount: bytes.readUInt32BE(33),
  };
  if (flags & 0x40) {
    const idLength = bytes.readUInt16BE(53);
    parsed.credentialId = bytes.subarray(55, 55 + idLength);
    const [key] = decodeCbor(bytes, 55 + idLength);
    if (!(key instanceof Map)) throw new Error("credential public key is not a COSE map");
    parsed.publicKey = key;
  }
  return parsed;
}

/** A COSE_Key (RFC 9053) as a node KeyObject: EC2 P-256 (ES256) or RSA (RS256). */
export function coseToPublicKey(cose: Map<Cbor, Cbor>): KeyObject {
  const part = (label: number) => {
    const value = cose.get(label);
    if (!(value instanceof Uint8Array)) throw new Error(`COSE key lacks ${label}`);
    return toBase64Url(value);
  };
  const kty = cose.get(1);
  if (kty === 2 && cose.get(3) === -7 && cose.get(-1) === 1) {
    return createPublicKey({ key: { kty: "EC", crv: "P-256", x: part(-2), y: part(-3) }, format: "jwk" });
  }
  if (kty === 3 && cose.get(3) === -257) {
    return createPublicKey({ key: { kty: "RSA", n: part(-1), e: part(-2) }, format: "jwk" });
  }
  throw new Error("unsupported COSE key (ES256 and RS256 only)");
}

export interface Expected {
  /** The challenge the server issued, as bytes. */
  challenge: Uint8Array;
  /** Origins the page may be on. */
  origins: readonly string[];
  rpId: string;
}

/** Checks clientDataJSON (WebAuthn §7.1/§7.2 steps 7–12): type, challenge, origin. */
function checkClientData(clientDataJSON: Uint8Array, type: string, expected: Expected): boolean {
  let client: { type?: unknown; challenge?: unknown; origin?: unknown };
  try {
    client = JSON.parse(Buffer.from(clientDataJSON).toString("utf8"));
  } catch {
    return false;
  }
  return (
    client.type === type &&
    client.challenge === toBase64Url(expected.challenge) &&
    typeof client.origin === "string" &&
    expected.origins.includes(client.origin)
  );
}

const rpMatches = (auth: AuthenticatorData, rpId: string) => auth.rpIdHash.equals(sha256(rpId));

/** A new credential (attestation "none" or any format: the statement is not checked), or null. */
export function verifyRegistration(
  response: { clientDataJSON: Uint8Array; attestationObject: Uint8Array },
  expected: Expected,
): { credentialId: string; publicKey: string; signCount: number } | null {
  try {
    if (!checkClientData(response.clientDataJSON, "webauthn.create", expected)) return null;
    const [attestation] = decodeCbor(response.attestationObject);
    const authData = attestation instanceof Map ? attestation.get("authData") : undefined;
    if (!(authData instanceof Uint8Array)) return null;
    const auth = parseAuthenticatorData(authData);
    if (!rpMatches(auth, expected.rpId) || !auth.userPresent || !auth.credentialId || !auth.publicKey)
      return null;
    const key = coseToPublicKey(auth.publicKey);
    return {
      credentialId: toBase64Url(auth.credentialId),
      publicKey: key.export({ type: "spki", format: "der" }).toString("base64"),
      signCount: auth.signCount,
    };
  } catch {
    return null;
  }
}

/** Checks an assertion of a stored credential; answers its new sign count, or null when it fails. */
export function verifyAssertion(
  response: { clientDataJSON: Uint8Array; authenticatorData: Uint8Array; signature: Uint8Array },
  stored: { publicKey: string; signCount: number },
  expected: Expected,
): number | null {
  try {
    if (!checkClientData(response.clientDataJSON, "webauthn.get", expected)) return null;
    const auth = parseAuthenticatorData(response.authenticatorData);
    if (!rpMatches(auth, expected.rpId) || !auth.userPresent) return null;
    const key = createPublicKey({
      key: Buffer.from(stored.publicKey, "base64"),
      format: "der",
      type: "spki",
    });
    const signed = Buffer.concat([Buffer.from(response.authenticatorData), sha256(response.clientDataJSON)]);
    if (!verify("sha256", signed, key, response.signature)) return null;
    // A counter that does not grow (when either side counts) means a cloned authenticator (§7.2 step 21).
    if ((auth.signCount !== 0 || stored.signCount !== 0) && auth.signCount <= stored.signCount) return null;
    return auth.signCount;
  } catch {
    return null;
  }
}
