/**
 * Uploaded images (issue 13 §1, seed 000 §5): jpg / png / webp up to 4 MB, named by the server.
 * Shared by the server, the SPA's picker and every feature that stores an image reference.
 */
import { z } from "zod";

export const MAX_IMAGE_BYTES = 4 * 1024 * 1024;
export const IMAGE_TYPES = ["image/jpeg", "image/png", "image/webp"] as const;
export type ImageType = (typeof IMAGE_TYPES)[number];
/** The file input's accept list. */
export const IMAGE_ACCEPT = ".jpg,.jpeg,.png,.webp,image/jpeg,image/png,image/webp";

/** A stored file's name: 128 random bits as hex, and the extension its bytes proved. */
export const UPLOAD_NAME_PATTERN = /^[0-9a-f]{32}\.(jpg|png|webp)$/;
export const UPLOAD_PATH = "/api/file/upload";
export const DOWNLOAD_PREFIX = "/api/file/downloads/";
export const downloadPath = (filename: string) => `${DOWNLOAD_PREFIX}${filename}`;

export const FileMsg = {
  tooLarge: "图片限制在4M内",
  badType: "仅支持 jpg、png、webp 格式的图片",
  /** Starts like an image but is damaged, or also carries HTML / script (see sniff.ts). */
  notImage: "文件不是有效的图片",
  empty: "图片为空",
  noFile: "请选择图片",
  quota: "今日上传图片过多，请明天再试",
  notYours: "图片不存在或不属于您",
  failed: "图片上传失败",
} as const;

/**
 * An image reference in a payload (`imageUrl`, `icon`): "" for none, or the download path of an
 * upload. Answers the bare filename ("" for none); the caller checks the upload is the caller's.
 */
export const imageRef = z
  .string()
  .max(200)
  .transform((value) => value.trim())
  .refine(
    (value) =>
      value === "" ||
      (value.startsWith(DOWNLOAD_PREFIX) && UPLOAD_NAME_PATTERN.test(value.slice(DOWNLOAD_PREFIX.length))),
    FileMsg.notYours,
  )
  .transform((value) => (value === "" ? "" : value.slice(DOWNLOAD_PREFIX.length)));

/** `POST /api/file/upload` answers `{file: {filename}}` (seed 000 §7). */
export interface UploadAnswer {
  file: { filename: string };
}
