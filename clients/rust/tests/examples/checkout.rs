//! checkout.rs: the application code under test

use std::time::Duration;

/// Asks the control-point service which checkout a user gets, and falls back to "control"
/// when the service cannot say.
pub fn variant(service_url: &str, user_id: &str) -> String {
    let agent: ureq::Agent = ureq::Agent::config_builder().timeout_global(Some(Duration::from_secs(2))).build().into();
    let body = serde_json::json!({"targetingKey": user_id, "flagKeys": ["checkout-v2"]});
    let answer = agent
        .post(&format!("{service_url}/v1/flags/evaluate"))
        .header("Authorization", "Bearer project-api-key_checkout")
        .content_type("application/json")
        .send(body.to_string())
        .and_then(|mut answer| answer.body_mut().read_to_string());
    let decided: Option<serde_json::Value> = answer.ok().and_then(|text| serde_json::from_str(&text).ok());
    match decided.as_ref().and_then(|d| d["decisions"][0]["value"].as_str()) {
        Some(variant) => variant.to_owned(),
        None => "control".to_owned(),
    }
}

/// Tells the service a user saw a variant (an exposure), for its experiment's numbers.
pub fn report_exposure(service_url: &str, user_id: &str, variant: &str) {
    let event = serde_json::json!({
        "type": "exposure", "flagKey": "checkout-v2", "targetingKey": user_id, "variant": variant,
    });
    let _ = ureq::post(&format!("{service_url}/v1/capture"))
        .header("Authorization", "Bearer project-api-key_checkout")
        .content_type("application/json")
        .send(serde_json::json!({ "events": [event] }).to_string());
}
