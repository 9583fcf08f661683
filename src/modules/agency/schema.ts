/**
 * Agencies (issue 16 §5; seed 000 §1 agency users, §4 agency_spend / agency_allocate): an admin
 * makes a user an agency owner and attaches customers to it; the owner hands its own permanent
 * traffic to them. Inputs, wire shapes and messages, shared by the server, the CLI and the SPA.
 */
import { z } from "zod";

const email = (empty: string) => z.string(empty).trim().toLowerCase().min(1, empty).max(254);

export const setAgencyInput = z.object({
  email: email("请输入代理的邮箱"),
  name: z.string().trim().max(50, "代理名称最多50个字").default(""),
});
export type SetAgencyInput = z.infer<typeof setAgencyInput>;
export const unsetAgencyInput = z.object({ email: email("请输入代理的邮箱") });

export const attachCustomerInput = z.object({
  agency_email: email("请输入代理的邮箱"),
  customer_email: email("请输入客户的邮箱"),
});
export type AttachCustomerInput = z.infer<typeof attachCustomerInput>;

/** Largest single allocation (G); a typo of a few zeros is refused rather than applied. */
export const MAX_ALLOCATE_G = 100_000;
/** Allocations one owner may make per hour (refused attempts do not count). */
export const ALLOCATIONS_PER_HOUR = 60;

export const allocateInput = z
  .object({
    customer_id: z.string().trim().min(1).max(64).optional(),
    email: email("请输入客户的邮箱").optional(),
    trafficG: z
      .number("请输入分配的流量")
      .positive("分配的流量须大于0")
      .max(MAX_ALLOCATE_G, `单次最多分配${MAX_ALLOCATE_G}G`),
  })
  .refine((input) => input.customer_id !== undefined || input.email !== undefined, {
    message: "请指定客户",
  });
export type AllocateInput = z.infer<typeof allocateInput>;

/** An agency on the wire. */
export interface Agency {
  ownerId: string;
  email: string;
  name: string;
  customerCount: number;
  createTime: number;
}

/** One customer of an agency as its owner sees it. Bytes and ms. */
export interface AgencyCustomer {
  _id: string;
  email: string;
  /** Permanent traffic left. */
  traffic: number;
  spendTraffic: number;
  vipExpireTime: number;
  /** Traffic this agency allocated to the customer so far (bytes). */
  allocated: number;
}

/** `/api/agency/customers`: the owner's agency, what it may still allocate, its customers. */
export interface AgencyCustomers {
  name: string;
  /** The owner's permanent traffic (trial traffic excluded): the most it can allocate (bytes). */
  available: number;
  /** The least one allocation moves (G): the transfer minimum. */
  minAllocateG: number;
  customers: AgencyCustomer[];
}

/** `/api/agency/allocate`: the balances after the allocation (bytes). */
export interface AllocateResult {
  customerEmail: string;
  allocated: number;
  ownerTraffic: number;
  customerTraffic: number;
}

export const AgencyMsg = {
  userNotFound: (email: string) => `用户不存在: ${email}`,
  notAnAgency: (email: string) => `该用户不是代理: ${email}`,
  ownerIsCustomer: "代理客户不能成为代理",
  customerIsOwner: "代理不能成为其他代理的客户",
  customerIsSelf: "代理不能成为自己的客户",
  customerNotNormal: "只有普通用户可以成为代理客户",
  customerOfOther: "该用户已是其他代理的客户，请先解除",
  notAttached: "该用户不是此代理的客户",
  callerNotOwner: "您不是代理，不能分配流量",
  notYourCustomer: "该用户不是您的代理客户",
  amountTooLow: (min: number) => `最低分配${min}G`,
  tooFrequent: "分配过于频繁，请稍后再试",
  notEnough: (availableG: string) => `可分配的永久流量不足（当前 ${availableG}G，体验流量不可分配）`,
  spendDesc: (g: string, email: string) => `分配给代理客户 ${email} ${g}G`,
  allocateDesc: (g: string, name: string) => `代理 ${name} 分配 ${g}G`,
  // SPA
  allocated: (g: string, email: string) => `已向 ${email} 分配 ${g}G`,
  allocateFailed: "分配失败",
  empty: "暂无代理客户",
} as const;
