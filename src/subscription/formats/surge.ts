import type { Renderer } from "../model.ts";

export const renderSurge: Renderer = () => {
  throw new Error("not rendered yet");
};
export const renderSurfboard: Renderer = () => {
  throw new Error("not rendered yet");
};
