import { type ChangeEvent, useState } from "react";
import { IMAGE_ACCEPT } from "../../src/modules/file/schema.ts";
import { uploadImage } from "../lib/upload.ts";
import { TOAST_SHORT, toast } from "./Toast.tsx";

export interface ImageUploadProps {
  /** "" or the image's download path ("/api/file/downloads/<name>"). */
  value: string;
  onChange: (imageUrl: string) => void;
  /** The picker's text and accessible name. */
  label?: string;
  /** The preview's shape: "round" for avatars. */
  shape?: "square" | "round";
  /** Whether to show the picked image with its remove button (a page with its own preview says no). */
  preview?: boolean;
  disabled?: boolean;
}

/**
 * An image picker: a button over a hidden file input that uploads at once (checked for type and
 * size first, 图片限制在4M内 as a toast), then shows the image with a × to remove it.
 */
export function ImageUpload({
  value,
  onChange,
  label = "上传图片",
  shape = "square",
  preview = true,
  disabled = false,
}: ImageUploadProps) {
  const [uploading, setUploading] = useState(false);
  const blocked = disabled || uploading;

  async function pick(event: ChangeEvent<HTMLInputElement>) {
    const file = event.currentTarget.files?.[0];
    // Cleared so that picking the same file again (after a refusal) still fires a change.
    event.currentTarget.value = "";
    if (!file) return;
    setUploading(true);
    const result = await uploadImage(file);
    setUploading(false);
    if (result.ok) onChange(result.imageUrl);
    else if (result.msg) toast.error(result.msg, TOAST_SHORT);
  }

  return (
    <div className={`image-upload image-upload-${shape}`}>
      {preview && value ? (
        <div className="image-upload-preview">
          <img src={value} alt={`${label}：已选图片`} />
          <button
            type="button"
            className="image-upload-remove"
            aria-label="移除图片"
            title="移除图片"
            disabled={blocked}
            onClick={() => onChange("")}
          >
            ×
          </button>
        </div>
      ) : null}
      <label
        className={`btn btn-small image-upload-pick${blocked ? " is-disabled" : ""}`}
        aria-busy={uploading}
      >
        <input
          type="file"
          className="visually-hidden"
          accept={IMAGE_ACCEPT}
          disabled={blocked}
          aria-label={uploading ? `${label}：上传中…` : label}
          onChange={(event) => void pick(event)}
        />
        <span aria-hidden="true">{uploading ? "上传中…" : value && preview ? "更换图片" : label}</span>
      </label>
    </div>
  );
}
