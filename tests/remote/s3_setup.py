"""Fills the S3 server of test_s3.py (moto, on 127.0.0.1) with boto3; runs in the venv of
cmake/install-s3-test.sh. Makes an IAM user with a key allowed s3:*, a role that user may assume (for a
session token), a bucket, and uploads the files; prints the credentials as JSON.

usage: s3_setup.py ENDPOINT BUCKET FILE|KEY=FILE..."""
import json
import os
import sys

import boto3

ENDPOINT, BUCKET, FILES = sys.argv[1], sys.argv[2], sys.argv[3:]
ALLOW_S3 = json.dumps({"Version": "2012-10-17",
                       "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]})


def client(name, **creds):
    creds = creds or {"aws_access_key_id": "setup", "aws_secret_access_key": "setup"}
    return boto3.client(name, endpoint_url=ENDPOINT, region_name="us-east-1", **creds)


def main():
    iam = client("iam")
    user = iam.create_user(UserName="h5pack")["User"]
    iam.put_user_policy(UserName="h5pack", PolicyName="s3", PolicyDocument=ALLOW_S3)
    key = iam.create_access_key(UserName="h5pack")["AccessKey"]
    trust = json.dumps({"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Principal": {"AWS": user["Arn"]}, "Action": "sts:AssumeRole"}]})
    role = iam.create_role(RoleName="reader", AssumeRolePolicyDocument=trust)["Role"]
    iam.put_role_policy(RoleName="reader", PolicyName="s3", PolicyDocument=ALLOW_S3)
    user_creds = {"aws_access_key_id": key["AccessKeyId"], "aws_secret_access_key": key["SecretAccessKey"]}
    session = client("sts", **user_creds).assume_role(RoleArn=role["Arn"], RoleSessionName="h5pack")["Credentials"]
    s3 = client("s3")
    s3.create_bucket(Bucket=BUCKET)
    for item in FILES:  # PATH, or KEY=PATH (split at the last "=": a key may hold one)
        name, path = item.rsplit("=", 1) if "=" in item else (os.path.basename(item), item)
        s3.upload_file(path, BUCKET, name)
    print(json.dumps({"key_id": key["AccessKeyId"], "secret": key["SecretAccessKey"],
                      "session": {"key_id": session["AccessKeyId"], "secret": session["SecretAccessKey"],
                                  "token": session["SessionToken"]}}))


main()
