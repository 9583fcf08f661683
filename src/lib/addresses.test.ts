/** The address classification behind the outbound URL rule (issue 26, C11) and `/metrics`. */
import { describe, expect, test } from "bun:test";
import { type AddressKind, addressKind, hostKind, urlHost } from "./addresses.ts";

const kinds = (hosts: string[], classify: (host: string) => AddressKind | null) =>
  Object.fromEntries(hosts.map((host) => [host, classify(host)]));

describe("hostKind: every spelling of a local target in a URL setting", () => {
  test("loopback in any spelling the URL parser reads", () => {
    const loopback = [
      "127.0.0.1",
      "127.1",
      "127.255.255.254",
      "0x7f000001",
      "0x7f.0.0.1",
      "2130706433",
      "0177.0.0.1",
      "017700000001",
      "[::1]",
      "::1",
      "[0:0:0:0:0:0:0:1]",
      "[::ffff:127.0.0.1]",
      "[::ffff:7f00:1]",
      "[::127.0.0.1]",
      "[64:ff9b::127.0.0.1]",
      "[2002:7f00:1::]",
      "localhost",
      "LOCALHOST.",
      "api.localhost",
    ];
    expect(kinds(loopback, hostKind)).toEqual(Object.fromEntries(loopback.map((host) => [host, "loopback"])));
  });

  test("private, link-local, unspecified and reserved ranges", () => {
    expect(
      kinds(
        [
          "10.0.0.1",
          "10.255.255.255",
          "172.16.0.1",
          "172.31.255.255",
          "192.168.1.1",
          "100.64.0.1",
          "[fc00::1]",
          "[fd12:3456::1]",
          "[fec0::1]",
          "[::ffff:10.1.2.3]",
          "[::ffff:192.168.0.1]",
          "169.254.169.254",
          "[fe80::1]",
          "[febf::1]",
          "[::ffff:169.254.169.254]",
          "0.0.0.0",
          "0",
          "[::]",
          "224.0.0.1",
          "255.255.255.255",
          "[ff02::1]",
        ],
        hostKind,
      ),
    ).toEqual({
      "10.0.0.1": "private",
      "10.255.255.255": "private",
      "172.16.0.1": "private",
      "172.31.255.255": "private",
      "192.168.1.1": "private",
      "100.64.0.1": "private",
      "[fc00::1]": "private",
      "[fd12:3456::1]": "private",
      "[fec0::1]": "private",
      "[::ffff:10.1.2.3]": "private",
      "[::ffff:192.168.0.1]": "private",
      "169.254.169.254": "link-local",
      "[fe80::1]": "link-local",
      "[febf::1]": "link-local",
      "[::ffff:169.254.169.254]": "link-local",
      "0.0.0.0": "unspecified",
      "0": "unspecified",
      "[::]": "unspecified",
      "224.0.0.1": "reserved",
      "255.255.255.255": "reserved",
      "[ff02::1]": "reserved",
    });
  });

  test("public addresses next to the private ranges are public; other names are left to resolution", () => {
    const publicHosts = [
      "8.8.8.8",
      "172.15.255.255",
      "172.32.0.1",
      "192.169.0.1",
      "100.63.255.255",
      "100.128.0.1",
      "169.255.0.1",
      "11.0.0.1",
      "126.255.255.255",
      "128.0.0.1",
      "[2001:4860:4860::8888]",
      "[::ffff:8.8.8.8]",
      "[2002:808:808::1]",
      "[fbff::1]",
      "[fe00::1]",
    ];
    expect(kinds(publicHosts, hostKind)).toEqual(
      Object.fromEntries(publicHosts.map((host) => [host, "public"])),
    );
    for (const name of ["api.trongrid.io", "pay.example.com", "localhost.example.com", "mylocalhost", "vm"]) {
      expect({ name, kind: hostKind(name) }).toEqual({ name, kind: null });
    }
  });
});

describe("addressKind: what resolvers and sockets hand back", () => {
  test("plain forms only; anything else is no address", () => {
    expect(addressKind("127.0.0.1")).toBe("loopback");
    expect(addressKind("::1")).toBe("loopback");
    expect(addressKind("::ffff:127.0.0.1")).toBe("loopback");
    expect(addressKind("fe80::1%eth0")).toBe("link-local");
    expect(addressKind("203.0.113.7")).toBe("public");
    expect(addressKind("2606:4700::1111")).toBe("public");
    for (const junk of [
      "",
      "localhost",
      "0x7f000001",
      "127.1",
      "1.2.3.256",
      "01.2.3.4",
      "1:2:3",
      "1::2::3",
      "::ffff:1.2.3",
      "1:2:3:4:5:6:7:8:9",
      "g::1",
    ]) {
      expect({ junk, kind: addressKind(junk) }).toEqual({ junk, kind: null });
    }
  });
});

test("urlHost: the host of an http(s) URL only", () => {
  expect(urlHost("https://api.trongrid.io/v1")).toBe("api.trongrid.io");
  expect(urlHost(" http://[::1]:8080/x ")).toBe("[::1]");
  expect(urlHost("http://0x7f000001/")).toBe("127.0.0.1");
  expect(urlHost("ftp://example.com/")).toBeNull();
  expect(urlHost("not a url")).toBeNull();
});
