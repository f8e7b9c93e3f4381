//! provider.rs: an infrastructure tool's code under test (a Terraform provider's resource)

/// Creates a project on the management plane with an organisation key; its id, or the
/// service's error as "STATUS CODE: message".
pub fn create_project(service_url: &str, org_key: &str, name: &str, slug: &str) -> Result<String, String> {
    let agent: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
    let mut answer = agent
        .post(&format!("{service_url}/v1/projects"))
        .header("Authorization", &format!("Bearer {org_key}"))
        .content_type("application/json")
        .send(serde_json::json!({"name": name, "slug": slug}).to_string())
        .map_err(|error| error.to_string())?;
    let status = answer.status().as_u16();
    let text = answer.body_mut().read_to_string().map_err(|error| error.to_string())?;
    let body: serde_json::Value = serde_json::from_str(&text).map_err(|error| error.to_string())?;
    let text_of = |value: &serde_json::Value| value.as_str().unwrap_or_default().to_owned();
    match status {
        201 => Ok(text_of(&body["project"]["projectId"])),
        _ => Err(format!("{status} {}: {}", text_of(&body["error"]["code"]), text_of(&body["error"]["message"]))),
    }
}
