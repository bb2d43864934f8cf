/** The screen's vocabulary: the kinds its detectors report and the shapes of their findings. */

export const SECRET_KINDS = [
  'private_key',
  'aws_access_key_id',
  'aws_secret_access_key',
  'github_token',
  'gitlab_token',
  'slack_token',
  'slack_webhook',
  'stripe_key',
  'openai_key',
  'anthropic_key',
  'huggingface_token',
  'google_api_key',
  'gcp_service_account',
  'azure_storage_key',
  'azure_sas_signature',
  'twilio_api_key',
  'sendgrid_api_key',
  'npm_token',
  'pypi_token',
  'jwt',
  'bearer_credential',
  'basic_credential',
  'credential_url',
  'connection_string',
  'password_assignment',
  'high_entropy_token',
] as const;
export type SecretKind = (typeof SECRET_KINDS)[number];

export const PII_KINDS = ['email', 'phone', 'postal_address', 'card_number', 'iban', 'gov_id'] as const;
export type PiiKind = (typeof PII_KINDS)[number];

export const INJECTION_KINDS = [
  'role_marker',
  'override_instruction',
  'tool_call_syntax',
  'system_prompt_probe',
] as const;
export type InjectionKind = (typeof INJECTION_KINDS)[number];

export interface PiiFinding {
  kind: PiiKind;
  start: number;
  end: number;
}

export interface InjectionFinding {
  kind: InjectionKind;
  start: number;
  end: number;
  /** The matched (already redacted) text, clipped to 120 chars. */
  excerpt: string;
}
