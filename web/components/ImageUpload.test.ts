/** The picker's own checks before anything is sent (issue 13 §1; the server checks the bytes again). */
import { describe, expect, test } from "bun:test";
import { FileMsg, MAX_IMAGE_BYTES } from "../../src/modules/file/schema.ts";
import { imageFileProblem, uploadImage } from "../lib/upload.ts";

const file = (size: number, name: string, type: string) => new File([new Uint8Array(size)], name, { type });

describe("imageFileProblem", () => {
  test("jpg, png and webp up to exactly 4 MB pass", () => {
    expect(imageFileProblem(file(MAX_IMAGE_BYTES, "a.png", "image/png"))).toBeNull();
    expect(imageFileProblem(file(10, "a.jpeg", "image/jpeg"))).toBeNull();
    expect(imageFileProblem(file(10, "a.webp", "image/webp"))).toBeNull();
    // A phone picker that names no type: the extension decides.
    expect(imageFileProblem(file(10, "IMG_0001.JPG", ""))).toBeNull();
  });

  test("4 MB + 1 byte is 图片限制在4M内; other types and empty files are refused", () => {
    expect(imageFileProblem(file(MAX_IMAGE_BYTES + 1, "a.png", "image/png"))).toBe("图片限制在4M内");
    expect(imageFileProblem(file(10, "a.gif", "image/gif"))).toBe(FileMsg.badType);
    expect(imageFileProblem(file(10, "a.svg", "image/svg+xml"))).toBe(FileMsg.badType);
    expect(imageFileProblem(file(10, "a.html", ""))).toBe(FileMsg.badType);
    expect(imageFileProblem(file(0, "a.png", "image/png"))).toBe(FileMsg.empty);
  });
});

describe("uploadImage", () => {
  test("a refused file is answered with the message without being sent", async () => {
    // A request would fail here (no page origin) and answer the network error instead.
    expect(await uploadImage(file(MAX_IMAGE_BYTES + 1, "big.jpg", "image/jpeg"))).toEqual({
      ok: false,
      msg: FileMsg.tooLarge,
    });
  });
});
