# The session table, exactly as store/dynamo expects it: the constants of
# store/dynamo and dynamo.TableInput are the reference, and
# test/terraform/schema_test.go compares this resource with them.
#
#   pk    S  partition key: "s#" + session id (no sort key)
#   pool  S  partition key of the index pool-lru
#   lu    N  sort key of pool-lru: last use, Unix ms
#   exp   N  expiry, Unix ms, projected into pool-lru
#   ttl   N  expiry, Unix s: the time-to-live attribute
#
# With existing_table_arn the module creates none: that table must have
# this schema (dynamo.CreateTable makes one).
resource "aws_dynamodb_table" "sessions" {
  count = local.create_table ? 1 : 0

  name                        = local.new_table_name
  billing_mode                = "PAY_PER_REQUEST"
  hash_key                    = "pk"
  deletion_protection_enabled = var.deletion_protection

  attribute {
    name = "pk"
    type = "S"
  }

  attribute {
    name = "pool"
    type = "S"
  }

  attribute {
    name = "lu"
    type = "N"
  }

  global_secondary_index {
    name               = "pool-lru"
    projection_type    = "INCLUDE"
    non_key_attributes = ["exp"]

    key_schema {
      attribute_name = "pool"
      key_type       = "HASH"
    }

    key_schema {
      attribute_name = "lu"
      key_type       = "RANGE"
    }
  }

  # DynamoDB deletes expired sessions eventually; the store checks "exp"
  # itself, so this only reclaims storage.
  ttl {
    attribute_name = "ttl"
    enabled        = true
  }

  point_in_time_recovery {
    enabled = var.point_in_time_recovery
  }

  tags = var.tags
}
