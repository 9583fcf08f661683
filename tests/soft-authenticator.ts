/**
 * A software WebAuthn authenticator for API tests (a fake of a phone's or a security key's):
 * a P-256 key per credential, "none" attestation, and assertions signed as WebAuthn §6.3.3 says.
 * It speaks the wire format (CBOR, authenticator data, clientDataJSON) the server reads.
 */
import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from "node:crypto";

type CborValue = number | string | Uint8Array | CborValue[] | Map<CborValue, CborValue>;

function head(major: number, length: number): Buffer {
  if (length < 24) return Buffer.from([(major << 5) | length]);
  if (length < 256) return Buffer.from([(major << 5) | 24, length]);
  const out = Buffer.alloc(3);
  out[0] = (major << 5) | 25;
  out.writeUInt16BE(length, 1);
  return out;
}

/** CBOR for the few types attestation objects hold. */
export function encodeCbor(value: CborValue): Buffer {
  if (typeof value === "number") return value >= 0 ? head(0, value) : head(1, -1 - value);
  if (typeof value === "string") {
    const bytes = Buffer.from(value, "utf8");
    return Buffer.concat([head(3, bytes.length), bytes]);
  }
  if (value instanceof Uint8Array) return Buffer.concat([head(2, value.length), value]);
  if (Array.isArray(value)) return Buffer.concat([head(4, value.length), ...value.map(encodeCbor)]);
  const parts = [head(5, value.size)];
  for (const [key, item] of value) parts.push(encodeCbor(key), encodeCbor(item));
  return Buffer.concat(parts);
}

const sha256 = (data: Uint8Array | string) => createHash("sha256").update(data).digest();
const b64url = (data: Uint8Array) => Buffer.from(data).toString("base64url");

export class SoftAuthenticator {
  readonly credentialId = randomBytes(16);
  private readonly key: KeyObject;
  private readonly publicJwk: { x: string; y: string };
  signCount = 0;

  constructor(
    readonly origin: string,
    readonly rpId = new URL(origin).hostname,
  ) {
    const pair = generateKeyPairSync("ec", { namedCurve: "P-256" });
    this.key = pair.privateKey;
    this.publicJwk = pair.publicKey.export({ format: "jwk" }) as { x: string; y: string };
  }

  private clientData(type: string, challenge: string): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge, origin: this.origin, crossOrigin: false }));
  }

  private authData(withCredential: boolean): Buffer {
    const flags = withCredential ? 0x41 : 0x01; // user present (+ attested credential data)
    const counter = Buffer.alloc(4);
    counter.writeUInt32BE(this.signCount);
    const parts: Uint8Array[] = [sha256(this.rpId), Buffer.from([flags]), counter];
    if (withCredential) {
      const idLength = Buffer.alloc(2);
      idLength.writeUInt16BE(this.credentialId.length);
      const cose = new Map<CborValue, CborValue>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, Buffer.from(this.publicJwk.x, "base64url")],
        [-3, Buffer.from(this.publicJwk.y, "base64url")],
      ]);
      parts.push(Buffer.alloc(16), idLength, this.credentialId, encodeCbor(cose));
    }
    return Buffer.concat(parts);
  }

  /** navigator.credentials.create's answer for a base64url challenge, as the SPA sends it. */
  create(challenge: string) {
    const attestation = new Map<CborValue, CborValue>([
      ["fmt", "none"],
      ["attStmt", new Map()],
      ["authData", this.authData(true)],
    ]);
    return {
      clientDataJSON: b64url(this.clientData("webauthn.create", challenge)),
      attestationObject: b64url(encodeCbor(attestation)),
    };
  }

  /** navigator.credentials.get's answer for a base64url challenge (the counter goes up by one). */
  get(challenge: string) {
    this.signCount += 1;
    const clientDataJSON = this.clientData("webauthn.get", challenge);
    const authenticatorData = this.authData(false);
    const signature = sign("sha256", Buffer.concat([authenticatorData, sha256(clientDataJSON)]), this.key);
    return {
      credentialId: b64url(this.credentialId),
      clientDataJSON: b64url(clientDataJSON),
      authenticatorData: b64url(authenticatorData),
      signature: b64url(signature),
    };
  }
}
