/**
 * The browser's side of passkeys (issue 30): navigator.credentials.create / get with the options
 * the server gives (binary fields as base64url) and their answers in base64url for the envelope.
 */
import type { LoginChallenge, PasskeyCreationOptions } from "../../src/modules/user/two-factor-schema.ts";

const toBytes = (text: string) => {
  const base64 = text.replace(/-/g, "+").replace(/_/g, "/");
  return Uint8Array.from(atob(base64 + "=".repeat((4 - (base64.length % 4)) % 4)), (c) => c.charCodeAt(0));
};
const toText = (buffer: ArrayBuffer) =>
  btoa(String.fromCharCode(...new Uint8Array(buffer)))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");

/** Whether this browser can use passkeys at all. */
export const passkeysSupported = () => typeof window.PublicKeyCredential === "function";

/** Creates a passkey; its answer for /api/user/passkey_add, or null when the user cancelled. */
export async function createPasskey(options: PasskeyCreationOptions) {
  const credential = (await navigator.credentials
    .create({
      publicKey: {
        challenge: toBytes(options.challenge),
        rp: options.rp,
        user: { ...options.user, id: toBytes(options.user.id) },
        pubKeyCredParams: [
          { type: "public-key", alg: -7 },
          { type: "public-key", alg: -257 },
        ],
        excludeCredentials: options.excludeCredentials.map((id) => ({ type: "public-key", id: toBytes(id) })),
        authenticatorSelection: { userVerification: "preferred", residentKey: "discouraged" },
        attestation: "none",
        timeout: 120_000,
      },
    })
    .catch(() => null)) as PublicKeyCredential | null;
  if (!credential) return null;
  const response = credential.response as AuthenticatorAttestationResponse;
  return {
    clientDataJSON: toText(response.clientDataJSON),
    attestationObject: toText(response.attestationObject),
  };
}

/** Signs the login's passkey challenge; the answer for /api/user/login_passkey, or null when cancelled. */
export async function getPasskeyAssertion(login: LoginChallenge) {
  const credential = (await navigator.credentials
    .get({
      publicKey: {
        challenge: toBytes(login.passkeyChallenge),
        allowCredentials: login.passkeys.map((id) => ({ type: "public-key", id: toBytes(id) })),
        userVerification: "preferred",
        timeout: 120_000,
      },
    })
    .catch(() => null)) as PublicKeyCredential | null;
  if (!credential) return null;
  const response = credential.response as AuthenticatorAssertionResponse;
  return {
    challenge: login.challenge,
    credentialId: toText(credential.rawId),
    clientDataJSON: toText(response.clientDataJSON),
    authenticatorData: toText(response.authenticatorData),
    signature: toText(response.signature),
  };
}
